"""Deploying a workspace: inputs, preview and production releases, local state, pull.

    inputs.collect_inputs(root)   → [InputFile]     every file a deployment ships
                                                    (basedb.workspace), read once
    site_zip.fingerprint(inputs)  → "sha256:…"      identity of those files (basedb.core)
    site_zip.build_site_zip(...)  → bytes           deterministic site.zip (basedb.core)
    pipeline.deploy_preview(...)                    `basedb deploy`
    production.deploy_production(...)               `basedb deploy --production`
    artifact.safe_extract(...)                      `basedb pull`: verified restore
    state.LocalState(root)                          .base-database-cli/state/
    doctor.run_doctor(...), demo.run_demo(...)      `basedb doctor`, `basedb demo`

May import: basedb.client, basedb.contracts, basedb.check, basedb.workspace, basedb.core
(not basedb.agent_tools, its sibling, nor the platform).
"""
