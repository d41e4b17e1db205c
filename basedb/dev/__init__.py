"""`basedb dev`: the workspace's page served from disk with live reload, an incremental
check on every save, the functions synced to the site's development draft, and each
call's log in the terminal.

    changes   which saved files matter, and to what (the page, a function, the workspace)
    checker   the incremental check: re-reads what changed, reuses the SQL analyses
    drafts    the development draft's body, re-read per changed function
    files     the page files under src/, resolved without leaving it
    server    the loopback HTTP server (Starlette): pages, live-reload events, calls
    session   the loop tying them together, and its shutdown

Imports: deploy and everything below it (the client, check, workspace, core), watchfiles,
Starlette and uvicorn; never the platform (the command line hands in the client).
"""
