"""Every code on the wire, once: an enum per family.

    Code         an envelope's `code` (the Open API, Lark's gateway and auth/v3 endpoints)
    RefreshCode  the `code` of Lark's OAuth token endpoint when a refresh is refused
    SchemaStatus a listed function's `schemaStatus`
    RecordErrorCode  `error.code` of a refused `ctx.records` call in a FaaS handler
    ErrorCode    a blocking finding of `check` (`data.errors[].code` of a refused draft)
    HintCode     a finding of `check` that never blocks

A value appears in one family only (tests/unit/test_protocol_home.py): a name is the
one way to write it, so a reader finds every use with a search for the name.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class Code(IntEnum):
    """Every business code in an envelope's `code`: the platform's answers and Lark's."""

    SUCCESS = 0
    BAD_REQUEST = 9499
    # Lark's gateway: the token (lark-cli `ClassifyLarkError`: auth, exit 3).
    TOKEN_MISSING = 99991661
    TOKEN_BAD_FORMAT = 99991671
    USER_TOKEN_INVALID = 99991668
    TOKEN_INVALID = 99991663  # an access token Lark does not know (tenant or user)
    USER_TOKEN_EXPIRED = 99991677
    # ... a scope or access is missing (permission, exit 1). PERMISSION_DENIED is the
    # app's missing scope in Lark, and the platform's "you may not do this".
    PERMISSION_DENIED = 99991672
    TOKEN_NO_PERMISSION = 99991676
    USER_SCOPE_INSUFFICIENT = 99991679
    USER_NOT_AUTHORIZED = 230027
    # ... the app itself (config and app_status, exit 3).
    APP_CREDENTIALS_INVALID = 99991543
    APP_NOT_IN_USE = 99991662
    APP_UNAUTHORIZED = 99991673
    RATE_LIMITED = 99991400
    # Lark's security policy: the user must pass a challenge first, or may not (lark-cli
    # `internal/auth/errors.go`); neither says the sign-in is bad.
    POLICY_CHALLENGE_REQUIRED = 21000
    POLICY_ACCESS_DENIED = 21001
    # Lark's auth/v3 tenant token endpoint: a malformed request, a wrong app secret.
    AUTH_PARAM_INVALID = 10003
    APP_SECRET_INVALID = 10014
    # The Agent OpenAPI of a site.
    FUNCTION_NOT_FOUND = 800004001
    PARAMETER_INVALID = 800004002
    FUNCTION_BUSINESS_ERROR = 800004003
    SCHEMA_NOT_READY = 800004004
    EXECUTION_FAILED = 800004005
    AI_FUNCTION_NOT_ENABLED = 800004011
    DEPLOYMENT_CONFLICT = 800004020
    AI_FUNCTION_MISSING_LOCALLY = 800004021
    AGENT_TOOLS_POLICY_INVALID = 800004030
    # Transport-level failures reuse their HTTP status as the code, as Lark's gateway does.
    ROUTE_NOT_FOUND = 404
    METHOD_NOT_ALLOWED = 405
    REQUEST_TIMEOUT = 408
    BODY_TOO_LARGE = 413
    HOST_NOT_ALLOWED = 421
    INTERNAL_ERROR = 500
    PLATFORM_BUSY = 503


class RefreshCode(IntEnum):
    """Lark's OAuth token endpoint refusing a refresh token (lark-cli
    `internal/auth/errors.go`): SERVER_ERROR may be retried once, the others mean the
    refresh token is gone."""

    INVALID = 20026
    EXPIRED = 20037
    SERVER_ERROR = 20050
    REVOKED = 20064
    ALREADY_USED = 20073


class SchemaStatus(StrEnum):
    """Whether a deployed function can be called by name (upstream agent-tools.md)."""

    READY = "ready"
    MISSING = "missing"
    NEEDS_UPGRADE = "needs_upgrade"
    UNAVAILABLE = "unavailable"


CALLABLE_STATUSES = frozenset({SchemaStatus.READY, SchemaStatus.MISSING})
"""A function may be called now: by its named params (ready), or with what its
description says (missing)."""


class RecordErrorCode(StrEnum):
    """Why a FaaS handler's record call (`ctx.records.…`) was refused: the rejected
    promise's `error.code`. Nothing of a refused call was written."""

    INVALID_ARGUMENT = "invalid_argument"  # the call itself is malformed (types, sizes)
    TABLE_NOT_FOUND = "table_not_found"  # not a table bound to the site
    FIELD_NOT_FOUND = "field_not_found"  # no such field in the table
    INVALID_VALUE = "invalid_value"  # a cell value the field cannot take (or read-only)
    RECORD_NOT_FOUND = "record_not_found"  # update / delete / get of a missing record
    BUSY = "busy"  # the database stayed locked by other writers; retry later
    INTERNAL_ERROR = "internal_error"  # a platform bug; logged with the run's log id


class ErrorCode(StrEnum):
    """A blocking finding of `check`; docs/checks.md documents each."""

    WORKSPACE_NOT_FOUND = "WORKSPACE_NOT_FOUND"
    WORKSPACE_CONFIG_INVALID = "WORKSPACE_CONFIG_INVALID"
    CATALOG_INVALID = "CATALOG_INVALID"
    DECLARATION_INVALID = "DECLARATION_INVALID"
    FUNCTION_ID_INVALID = "FUNCTION_ID_INVALID"
    FUNCTION_ID_DUPLICATE = "FUNCTION_ID_DUPLICATE"
    PARAM_NAME_MISSING = "PARAM_NAME_MISSING"
    PARAM_NAME_INVALID = "PARAM_NAME_INVALID"
    PARAM_NAME_DUPLICATE = "PARAM_NAME_DUPLICATE"
    PARAM_DESCRIPTION_MISSING = "PARAM_DESCRIPTION_MISSING"
    PARAM_KIND_INVALID = "PARAM_KIND_INVALID"
    ENUM_EMPTY = "ENUM_EMPTY"
    ENUM_DUPLICATE = "ENUM_DUPLICATE"
    ENUM_NULL = "ENUM_NULL"
    ENUM_TYPE_MISMATCH = "ENUM_TYPE_MISMATCH"
    ENUM_OUT_OF_DOMAIN = "ENUM_OUT_OF_DOMAIN"
    FAAS_SCHEMA_NOT_OBJECT = "FAAS_SCHEMA_NOT_OBJECT"
    FAAS_PROPERTY_DESCRIPTION_MISSING = "FAAS_PROPERTY_DESCRIPTION_MISSING"
    FAAS_SCHEMA_INVALID = "FAAS_SCHEMA_INVALID"
    FAAS_PATTERN_UNSUPPORTED = "FAAS_PATTERN_UNSUPPORTED"
    FAAS_NETWORK_INVALID = "FAAS_NETWORK_INVALID"
    FAAS_SECRET_INVALID = "FAAS_SECRET_INVALID"
    FAAS_PACKAGE_INVALID = "FAAS_PACKAGE_INVALID"
    FAAS_DEPENDENCY_NOT_ALLOWED = "FAAS_DEPENDENCY_NOT_ALLOWED"
    FAAS_DEPENDENCY_NOT_BUNDLED = "FAAS_DEPENDENCY_NOT_BUNDLED"
    SQL_PARSE_ERROR = "SQL_PARSE_ERROR"
    SQL_NOT_READ_ONLY = "SQL_NOT_READ_ONLY"
    SQL_NO_BOUND_TABLE = "SQL_NO_BOUND_TABLE"
    SQL_UNKNOWN_TABLE = "SQL_UNKNOWN_TABLE"
    SQL_UNKNOWN_FIELD = "SQL_UNKNOWN_FIELD"
    SQL_PARAM_UNDECLARED = "SQL_PARAM_UNDECLARED"
    SQL_UNSUPPORTED = "SQL_UNSUPPORTED"
    SQL_INVALID = "SQL_INVALID"
    MUTATION_TABLE_UNKNOWN = "MUTATION_TABLE_UNKNOWN"
    MUTATION_FIELD_UNKNOWN = "MUTATION_FIELD_UNKNOWN"
    MUTATION_FIELD_READONLY = "MUTATION_FIELD_READONLY"
    MUTATION_PARAM_UNDECLARED = "MUTATION_PARAM_UNDECLARED"
    AGENT_TOOLS_INVALID = "AGENT_TOOLS_INVALID"
    CONTRACTS_STALE = "CONTRACTS_STALE"
    INPUT_INVALID = "INPUT_INVALID"
    INPUT_SYMLINK = "INPUT_SYMLINK"
    INPUT_UNREADABLE = "INPUT_UNREADABLE"
    INPUT_TOO_MANY_FILES = "INPUT_TOO_MANY_FILES"
    INPUT_TOO_LARGE = "INPUT_TOO_LARGE"


class HintCode(StrEnum):
    """A finding of `check` that never blocks."""

    FUNCTION_DESCRIPTION_SHORT = "function_description_short"
    PARAM_DESCRIPTION_SHORT = "param_description_short"
    OPTION_FIELD_UNCONSTRAINED = "option_field_unconstrained"
    REFERENCE_VALUE_HINT = "reference_value_hint"
    ENUM_UNCHECKED = "enum_unchecked"
    PARAM_UNUSED = "param_unused"
    DESCRIPTION_NEAR_DUPLICATE = "description_near_duplicate"
    DESCRIPTION_NAMES_CLOSED = "description_names_closed"
    DESCRIPTION_VAGUE_POINTER = "description_vague_pointer"
    NAME_CONTRADICTS_DESCRIPTION = "name_contradicts_description"
