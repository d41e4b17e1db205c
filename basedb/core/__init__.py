"""The core: what every layer of basedb may use.

    errors      the exceptions basedb raises and the exit code of each
    site_zip    the site.zip format: manifest, fingerprint, build, verified read
    content_hash the content hash of a draft function (client and platform alike)
    skill_spec  the Agent Skills format rules (names, descriptions, frontmatter)
    json_schema helpers over JSON Schema documents (where a schema's patterns are)
    schema_regex JSON Schema patterns (ECMA-262) on RE2, a linear-time engine
    node        finding Node.js, which runs FaaS handlers
    page_sdk    the page SDK module, its names and the import map served pages carry
    paths, atomic, redact, resources
                user directories, atomic private writes, token redaction, shipped files

Codes, envelopes and findings are the wire's, in `basedb.protocol` (the layer above).

Imports nothing of basedb outside itself (docs/architecture.md; `lint-imports` checks it).
"""
