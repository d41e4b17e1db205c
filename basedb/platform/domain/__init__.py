"""The platform's domain: what the Open API does, independent of HTTP.

Bases and records, sites and who may access them, identity, drafts, artifacts and
deployments, the deployment snapshots prod and preview run, function plans (a deployed
function judged against the live catalog), what describe publishes, invoke, and the
runtimes under `runtimes/`. Functions take a store or connection, the caller and plain
values, and raise `basedb.protocol.ApiFailure`.

Calls return typed results, not dicts: rows and the workspace model's `Table` and `Field`,
or frozen, slotted dataclasses whose `to_dict()` is the one place a route's JSON is made
(`records.RecordPage`, `sites.SiteView`, `logs.LogPage`, `describe.FunctionDescription`,
`draft_results.DraftListing`, `deployment_results.DeploymentView`, …), as
`basedb.check.CheckResult` is for `basedb check --json`. The web layer answers
`result.to_dict()`. What stays a dict is data by nature: record cells, JSON Schema
documents and the request examples built from them, functionHints stored as `check --json`
rendered them, and the lookups results are built from (tests/unit/test_domain_results.py
keeps that list).

May import: basedb.platform.storage, basedb.check, basedb.sql, basedb.workspace,
basedb.core.
"""
