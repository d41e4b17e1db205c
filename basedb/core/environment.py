"""Every environment variable basedb reads, in one registry.

docs/cli.md renders this table (`python -m basedb.cli.reference --write`), and a test
scans the code for every variable it reads and fails on one missing here, so the
documentation cannot fall behind the code. The modules that read a variable name it
with the constants below.
"""

from __future__ import annotations

from basedb.core.frozen import frozen_dataclass


@frozen_dataclass
class EnvVar:
    name: str
    what: str  # what it changes, in one or two sentences
    default: str  # what happens when it is unset


# Where basedb keeps its files (basedb.core.paths)
DATA_DIR = "BASEDB_DATA_DIR"
CONFIG_DIR = "BASEDB_CONFIG_DIR"
STATE_DIR = "BASEDB_STATE_DIR"
# Which profile applies (every command with --profile)
PROFILE = "BASEDB_PROFILE"
# The local platform
PUBLIC_URL = "BASEDB_PUBLIC_URL"
ACCESS_LOG = "BASEDB_ACCESS_LOG"
NODE = "BASEDB_NODE"
AI_BASE_URL = "BASEDB_AI_BASE_URL"
AI_API_KEY = "BASEDB_AI_API_KEY"
AI_MODEL = "BASEDB_AI_MODEL"
AI_IMAGE_MODEL = "BASEDB_AI_IMAGE_MODEL"
# The FaaS runtime of the local platform (docs/faas-sandbox.md)
FAAS_CONCURRENCY = "BASEDB_FAAS_CONCURRENCY"
FAAS_SITE_CONCURRENCY = "BASEDB_FAAS_SITE_CONCURRENCY"
FAAS_MEMORY_MB = "BASEDB_FAAS_MEMORY_MB"
FAAS_DISK_MB = "BASEDB_FAAS_DISK_MB"
FAAS_IDLE_SECONDS = "BASEDB_FAAS_IDLE_SECONDS"
FAAS_SPARES = "BASEDB_FAAS_SPARES"
FAAS_WARM_MB = "BASEDB_FAAS_WARM_MB"
FAAS_SANDBOX = "BASEDB_FAAS_SANDBOX"
FAAS_ALLOWED_DEPENDENCIES = "BASEDB_FAAS_ALLOWED_DEPENDENCIES"
# Troubleshooting, and how requests are sent
DEBUG = "BASEDB_DEBUG"
TIMEOUT = "BASEDB_TIMEOUT"
# Feishu / Lark (basedb.client.lark, docs/lark.md)
LARK_APP_ID = "LARK_APP_ID"
LARK_APP_SECRET = "LARK_APP_SECRET"
LARK_BRAND = "LARK_BRAND"
LARK_OPEN_URL = "BASEDB_LARK_OPEN_URL"
LARK_ACCOUNTS_URL = "BASEDB_LARK_ACCOUNTS_URL"
LARK_CLI = "BASEDB_LARK_CLI"
LARK_ENDPOINTS = "BASEDB_LARK_ENDPOINTS"
SECRET_STORE = "BASEDB_SECRET_STORE"
LARK_DEVICE_INTERVAL = "BASEDB_LARK_DEVICE_INTERVAL"

VARIABLES: tuple[EnvVar, ...] = (
    EnvVar(PROFILE, "The profile to use when a command gets no --profile.",
           "the workspace's `profile`, else `local` (the embedded platform)"),
    EnvVar(CONFIG_DIR, "Where profiles (config.json) are kept.",
           "the user config directory, e.g. ~/.config/basedb"),
    EnvVar(DATA_DIR, "Where the local platform keeps its SQLite database, owner token and "
           "platform.log.", "the user data directory, e.g. ~/.local/share/basedb"),
    EnvVar(STATE_DIR, "Where user-level state is kept, such as the record of installed site "
           "Skills.", "the user state directory, e.g. ~/.local/state/basedb"),
    EnvVar(PUBLIC_URL, "The origin every public URL of the local platform starts with "
           "(baseAppUrl, site links, /openapi.json's servers): set it when the platform is "
           "reached through a proxy or another host name.",
           "the URL `basedb serve` listens on; http://127.0.0.1:8787 for the embedded "
           "platform"),
    EnvVar(ACCESS_LOG, "Any value but empty or 0: the local platform logs one line per HTTP "
           "request.", "no access log"),
    EnvVar(NODE, "The Node.js executable that runs FaaS handlers on the local platform.",
           "`node` on PATH"),
    EnvVar("PATH", "Where `node` is looked for when BASEDB_NODE is unset (FaaS workers get a "
           "PATH of system directories only).", "the system's default"),
    EnvVar(FAAS_SANDBOX, "`require`: refuse to run FaaS handlers without an OS sandbox "
           "(bubblewrap); `off`: run them as plain processes even where it exists.",
           "`auto`: the strongest sandbox the machine offers, said at start"),
    EnvVar(FAAS_CONCURRENCY, "FaaS calls running at once on one platform process; more "
           "answer 503 retry later.", "16"),
    EnvVar(FAAS_SITE_CONCURRENCY, "FaaS calls of one site running at once.", "8"),
    EnvVar(FAAS_MEMORY_MB, "Resident memory of one FaaS worker, Node.js included (cgroup "
           "where the platform may write one).", "256"),
    EnvVar(FAAS_DISK_MB, "Size of a FaaS worker's work directory, and of its largest file.",
           "64"),
    EnvVar(FAAS_IDLE_SECONDS, "An idle warm FaaS worker is stopped after this long.", "60"),
    EnvVar(FAAS_SPARES, "Started FaaS workers `basedb serve` keeps ready for first calls.",
           "1"),
    EnvVar(FAAS_WARM_MB, "Memory (PSS) of the warm FaaS workers of all sites together, about "
           "10 MB each; past it the least recently used are stopped.", "1536"),
    EnvVar(FAAS_ALLOWED_DEPENDENCIES, "The FaaS dependency policy's `allowedValues`: a JSON "
           "array of regular expressions; a package.json dependency from a restricted source "
           "(git, a URL, a path) passes `basedb check` only when one of them matches all of "
           "it.", "only registry versions are allowed"),
    EnvVar(AI_BASE_URL, "The root of an OpenAI-compatible API (e.g. "
           "http://127.0.0.1:11434/v1) that answers AI Functions on the local platform.",
           "AI Functions are not enabled locally"),
    EnvVar(AI_API_KEY, "The API key sent to BASEDB_AI_BASE_URL.", "no key is sent"),
    EnvVar(AI_MODEL, "The model named in AI Function requests.", "`default`"),
    EnvVar(AI_IMAGE_MODEL, "The model named in image AI Function (media task) requests.",
           "BASEDB_AI_MODEL"),
    EnvVar(DEBUG, "Any non-empty value: every request and response line is logged to stderr "
           "with secrets masked (as --verbose), and an internal error (exit 5) also prints its "
           "traceback.", "the message and hint only"),
    EnvVar(TIMEOUT, "Seconds to wait for each answer from a platform (as --timeout).", "30"),
    EnvVar(LARK_APP_ID, "A Feishu/Lark app's id. With LARK_APP_SECRET, `--profile NAME` naming "
           "no stored profile is a bot profile of that app (CI), and `auth login --brand` "
           "uses it.", "no app credentials from the environment"),
    EnvVar(LARK_APP_SECRET, "That app's secret (never printed).",
           "the secret stored with the profile"),
    EnvVar(LARK_BRAND, "The brand of a bot profile made from LARK_APP_ID: feishu or lark.",
           "feishu"),
    EnvVar(LARK_OPEN_URL, "Where a brand's open host (open.feishu.cn, open.larksuite.com) is "
           "reached instead, e.g. a `basedb serve` standing in for Lark.", "the brand's host"),
    EnvVar(LARK_ACCOUNTS_URL, "Where a brand's accounts host (the OAuth device flow) is "
           "reached instead.", "the brand's host"),
    EnvVar(LARK_CLI, "The lark-cli executable a lark-cli profile runs.", "`lark-cli` on PATH"),
    EnvVar(LARK_ENDPOINTS, "A JSON file of {name: path template} replacing basedb's inferred "
           "site paths (docs/lark.md, \"Endpoints\"), e.g. {\"deployments\": "
           "\"/sites/{app}/releases\"}.", "the paths basedb infers"),
    EnvVar(SECRET_STORE, "Where app secrets and tokens are kept: auto, keyring or file.",
           "auto: the OS keyring when `keyring` has a working backend, else encrypted 0600 files"),
    EnvVar(LARK_DEVICE_INTERVAL, "The polling interval, in seconds, the local platform's Lark "
           "stand-in asks device sign-ins for (tests).", "5"),
    EnvVar("NO_COLOR", "Any non-empty value turns colours off (no-color.org).",
           "colours on a terminal"),
    EnvVar("GITHUB_WORKSPACE", "The repository checkout that `check --format github` and "
           "`--format sarif` make paths relative to (set by GitHub Actions).",
           "the current directory"),
    EnvVar("CODEX_HOME", "Where `skill install` and `agent-tools skill install` find Codex "
           "(skills go to $CODEX_HOME/skills).", "~/.codex"),
    EnvVar("CLAUDE_CONFIG_DIR", "Where those commands find Claude Code (skills go to "
           "$CLAUDE_CONFIG_DIR/skills).", "~/.claude"),
    EnvVar("TZ", "Passed on to FaaS handlers, whose datetime cells are in the platform's "
           "local time.", "the system's time zone"),
    EnvVar("_BASEDB_COMPLETE", "Read by click for shell completion (see Shell completion "
           "below); not for everyday use.", "normal operation"),
)

BY_NAME: dict[str, EnvVar] = {var.name: var for var in VARIABLES}
