"""Deploying a workspace: input fingerprint, the site.zip artifact, local state, pull.

    manifest.collect_inputs(root) → [InputFile]     every file a deployment ships
    manifest.fingerprint(inputs)  → "sha256:…"      identity of those files
    artifact.build_site_zip(...)  → bytes           deterministic site.zip
    artifact.safe_extract(...)                      `basedb pull`: verified restore
    state.LocalState(root)                          .base-database-cli/state/
"""
