"""The site endpoints the deploy pipeline, pull and catalog pull use, one method each.

A thin, typed layer over `basedb.client.Client`: paths come from
`basedb.client.endpoints` (where the inferred ones are marked), and each method returns
the envelope's `data` (errors are the client's ApiError, AuthError and NetworkError). The
deployments calls return the wire's own models (`basedb.protocol.deployments`), decoded
from the answer (BadResponse when it is not one); the others still return the `data`
dict, whose shape is in the platform's routes (docs/architecture.md lists the slices
left to convert).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from basedb.client import endpoints
from basedb.core.frozen import frozen_dataclass
from basedb.protocol import data_of
from basedb.protocol.deployments import (
    DeploymentCreated,
    DeploymentDetail,
    DeploymentFields,
    DeploymentListing,
    ProdPointed,
)
from basedb.protocol.wire import UNSET, Model, decode, encode

if TYPE_CHECKING:
    from basedb.client.client import Client




@frozen_dataclass
class LogQuery:
    """What to read of a platform log (GET /sites/APP/logs, GET /logs): `after` is the
    cursor of the last entry read; `wait` holds the answer up to that many seconds until
    an entry arrives (a long poll, at most 25)."""

    log_id: str | None = None
    after: str | None = None
    limit: int | None = None
    tail: int | None = None
    env: str | None = None
    function_id: str | None = None
    kind: str | None = None
    wait: int | None = None

    def params(self) -> dict[str, Any]:
        return {"logId": self.log_id, "after": self.after, "limit": self.limit,
                "tail": self.tail, "env": self.env, "functionId": self.function_id,
                "kind": self.kind, "wait": self.wait}


def platform_logs(client: Client, query: LogQuery) -> dict[str, Any]:
    """A page of the whole platform log (its owner only): {entries, hasMore, cursor}."""
    return data_of(client.request("GET", endpoints.PLATFORM_LOGS, params=query.params()))


def create_site(client: Client, title: str) -> dict[str, Any]:
    """POST /sites/create {title} -> {appToken, title}."""
    return data_of(client.request("POST", endpoints.SITES_CREATE, json={"title": title}))


class SiteApi:
    """The endpoints of one site (`app_token`) on the platform `client` talks to."""

    def __init__(self, client: Client, app_token: str) -> None:
        self.client = client
        self.app_token = app_token

    def _get(self, path: str, *, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return data_of(self.client.request("GET", path, params=params))

    def _send(self, method: str, path: str, body: Any = None, *,
              revision: int | None = None) -> dict[str, Any]:
        params = {"draftRevision": revision} if revision is not None else None
        return data_of(self.client.request(method, path, json=body, params=params))

    # ----------------------------------------------------------------------- site

    def site(self) -> dict[str, Any]:
        return self._get(endpoints.site(self.app_token))

    def delete(self) -> dict[str, Any]:
        return self._send("DELETE", endpoints.site(self.app_token))

    def catalog(self) -> dict[str, Any]:
        return self._get(endpoints.catalog(self.app_token))

    def bind_base(self, base_token: str, table_ids: list[str]) -> dict[str, Any]:
        """Append `table_ids` of `base_token` to the site's binding (deduped, never
        replacing) -> {appToken, baseToken, tableIds}."""
        return self._send("POST", endpoints.bind_base(self.app_token),
                          {"baseToken": base_token, "tableIds": table_ids})

    def unbind_base(self, table_ids: list[str]) -> dict[str, Any]:
        """Remove `table_ids` from the binding -> {appToken, baseToken, tableIds}."""
        return self._send("POST", endpoints.unbind_base(self.app_token),
                          {"tableIds": table_ids})

    # -------------------------------------------------------------------- secrets

    def secrets(self) -> dict[str, Any]:
        return self._get(endpoints.secrets(self.app_token))

    def put_secret(self, name: str, value: str) -> dict[str, Any]:
        return self._send("PUT", endpoints.secret(self.app_token, name), {"value": value})

    def delete_secret(self, name: str) -> dict[str, Any]:
        return self._send("DELETE", endpoints.secret(self.app_token, name))

    # --------------------------------------------------------------------- drafts
    #
    # A write given `revision` (the draftRevision the caller's previous write answered)
    # is refused with 800004020 when someone else changed the drafts in between.

    def put_draft_functions(self, body: dict[str, Any], *,
                            revision: int | None = None) -> dict[str, Any]:
        return self._send("PUT", endpoints.draft_functions(self.app_token), body,
                          revision=revision)

    def draft_functions(self) -> dict[str, Any]:
        return self._get(endpoints.draft_functions(self.app_token))

    def draft_hashes(self) -> dict[str, Any]:
        """What the site holds: content hashes of its draft functions, fingerprints of its
        newest deployments."""
        return self._get(endpoints.draft_hashes(self.app_token))

    def put_draft_ai_functions(self, body: dict[str, Any], *,
                               revision: int | None = None) -> dict[str, Any]:
        return self._send("PUT", endpoints.draft_ai_functions(self.app_token), body,
                          revision=revision)

    def draft_ai_functions(self) -> dict[str, Any]:
        return self._get(endpoints.draft_ai_functions(self.app_token))

    def put_draft_agent_tools(self, exclude: list[str], *,
                              revision: int | None = None) -> dict[str, Any]:
        return self._send("PUT", endpoints.draft_agent_tools(self.app_token),
                          {"exclude": exclude}, revision=revision)

    def draft_agent_tools(self) -> dict[str, Any]:
        return self._get(endpoints.draft_agent_tools(self.app_token))

    # ----------------------------------------------------------- development draft

    def put_dev_functions(self, body: dict[str, Any]) -> dict[str, Any]:
        """Replace the development draft (what env=dev calls run)."""
        return self._send("PUT", endpoints.dev_functions(self.app_token), body)

    def discard_dev_functions(self) -> dict[str, Any]:
        return self._send("DELETE", endpoints.dev_functions(self.app_token))

    # ---------------------------------------------------------------- deployments

    def _model(self, data: dict[str, Any], model: type[Model], what: str) -> Model:
        return decode(data, model, what=f"{what} of site {self.app_token}")

    def create_deployment(self, site_zip: bytes | None, fingerprint: str, *,
                          revision: int | None = None) -> DeploymentCreated:
        """A preview of the drafts as they are, refused (800004020) when they are no
        longer at `revision`. `site_zip` None leaves the artifact out: the platform reuses
        the site.zip of the site's deployment with this fingerprint (9499 with
        data.resend when it has none)."""
        fields: dict[str, str] = encode(DeploymentFields(
            fingerprint=fingerprint,
            draft_revision=str(revision) if revision is not None else UNSET))
        if site_zip is None:  # still multipart: text parts without a file
            answer = self.client.request(
                "POST", endpoints.deployments(self.app_token),
                files={name: (None, value) for name, value in fields.items()})
        else:
            answer = self.client.request(
                "POST", endpoints.deployments(self.app_token),
                files={"artifact": ("site.zip", site_zip, "application/zip")}, data=fields)
        return self._model(data_of(answer), DeploymentCreated, "POST deployments")

    def deployments(self) -> DeploymentListing:
        """The site's deployments, newest first."""
        return self._model(self._get(endpoints.deployments(self.app_token)),
                           DeploymentListing, "GET deployments")

    def deployment(self, deployment_id: str) -> DeploymentDetail:
        return self._model(self._get(endpoints.deployment(self.app_token, deployment_id)),
                           DeploymentDetail, f"GET deployments/{deployment_id}")

    def promote(self, deployment_id: str) -> ProdPointed:
        return self._model(self._send("POST", endpoints.promote(self.app_token,
                                                                deployment_id)),
                           ProdPointed, f"POST deployments/{deployment_id}/promote")

    def rollback(self, deployment_id: str) -> ProdPointed:
        return self._model(self._send("POST", endpoints.rollback(self.app_token,
                                                                 deployment_id)),
                           ProdPointed, f"POST deployments/{deployment_id}/rollback")

    def artifact(self, deployment_id: str) -> bytes:
        return self.client.download(endpoints.artifact(self.app_token, deployment_id))

    # ------------------------------------------------------------------ functions

    def skill(self) -> dict[str, Any]:
        """The site Skill rendered from production (GET /skill?env=prod)."""
        return self._get(endpoints.skill(self.app_token), params={"env": "prod"})

    def logs(self, query: LogQuery) -> dict[str, Any]:
        """A page of the site's platform log: {entries, hasMore, cursor}."""
        return self._get(endpoints.logs(self.app_token), params=query.params())

    def invoke(self, function_id: str, params: dict[str, Any], *,
               env: str = "prod") -> dict[str, Any]:
        return data_of(self.client.request(
            "POST", endpoints.invoke(self.app_token, function_id),
            params={"env": env}, json={"params": params}))


def draft_revision(data: dict[str, Any]) -> int | None:
    """The draftRevision of a draft answer (None from a platform that has none)."""
    value = data.get("draftRevision")
    return value if isinstance(value, int) and not isinstance(value, bool) else None

