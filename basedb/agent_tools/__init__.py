"""Agent tools: what lets AI agents use a published site, and basedb itself.

    install       skill roots of the local agents (Codex, ~/.agents, Claude), the install
                  summaries in the user state dir, and atomic skill directory writes
    site_skill    `basedb agent-tools skill install`: fetch a site's prod Skill, install it
    dev_skill     `basedb skill install`: the developer Skill shipped with basedb
    site_tools    a site's open functions as model-facing tools (no MCP import)
    mcp_server    `basedb mcp`: those tools served over stdio with the MCP SDK

Only `mcp_server` imports the optional `mcp` package. The Agent Skills format rules
are in `basedb.core.skill_spec`, shared with the platform that renders site Skills.

May import: basedb.client, basedb.contracts, basedb.check, basedb.workspace, basedb.core
(not basedb.deploy, its sibling, nor the platform).
"""
