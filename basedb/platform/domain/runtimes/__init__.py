"""What runs a deployed function: SQL queries on a read-only connection, Mutations in one
write transaction, FaaS handlers in Node.js, AI Functions against a configured endpoint.
"""
