"""`basedb check`: validators that turn a loaded workspace into findings."""
