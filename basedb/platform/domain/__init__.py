"""The platform's domain: what the Open API does, independent of HTTP.

Bases and records, sites and who may access them, identity, drafts, artifacts and
deployments, the deployment snapshots prod and preview run, function plans (a deployed
function judged against the live catalog), what describe publishes, invoke, and the
runtimes under `runtimes/`. Functions take a store or connection, the caller and plain
values, and raise `basedb.core.protocol.ApiFailure`.

May import: basedb.platform.storage, basedb.check, basedb.workspace, basedb.core.
"""
