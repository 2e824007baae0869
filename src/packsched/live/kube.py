"""The API port on the official ``kubernetes`` client.

The client reads the kubeconfig (or the in-cluster service account), sets up TLS, client certificates and
bearer tokens (refreshing exec-plugin and service-account tokens), and owns the connection pool. Requests go
through that pool as plain JSON rather than through the generated typed API, for three reasons: a successful
``pods/binding`` POST is answered with a ``Status``, which the generated ``create_namespaced_pod_binding``
tries to read as a ``V1Binding`` (and fails on); watches must hand back bookmarks and ``ERROR`` events (410
Gone) as they come; and packsched decodes objects with its own strict decoder, so typed models would be a
second, lossy decoding.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import urllib3
import yaml
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from packsched.api.errors import ErrorList, InputError
from packsched.api.nesting import TOO_DEEP
from packsched.config.defaults import DEFAULT_CLIENT_BURST, DEFAULT_CLIENT_QPS
from packsched.live.http import LeanClient, NoAnswer
from packsched.live.port import BOOKMARK, ERROR, EVENTS, ApiError, Obj, Resource, WatchEvent
from packsched.live.ratelimit import TokenBucket

PODS_PATH = "/api/v1/namespaces/{ns}/pods/{name}"
STRATEGIC_MERGE = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"
USER_AGENT = "packsched/0.1.0"
# Connections kept open per host: the binding workers (16), the informers' watches (up to 17), the event and status
# writers, the prober.
DEFAULT_POOL_SIZE = 48
DEFAULT_TIMEOUT_S = 30.0  # read timeout of a request (a watch has its own)
AUTH_REFRESH_S = 30.0
_Items = list[Obj]  # (inside KubernetesPort, ``list`` names its method)
BUILTIN_GROUPS = frozenset(
    {
        "",
        "apps",
        "policy",
        "coordination.k8s.io",
        "scheduling.k8s.io",
        "events.k8s.io",
        "storage.k8s.io",
        "resource.k8s.io",
    }
)


def _check_kubeconfig(path: str, context: str | None = None) -> None:
    """Report a kubeconfig's problems with the file and field, before the client reads it (``context``: the one
    to use instead of the current context)."""
    errors = ErrorList(file=path)
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        raise InputError.single(f"cannot read kubeconfig: {exc.strerror or exc}", file=path) from None
    except UnicodeDecodeError:
        raise InputError.single("cannot read kubeconfig: the file is not UTF-8 text", file=path) from None
    except RecursionError:
        raise InputError.single(TOO_DEEP, file=path) from None
    except yaml.YAMLError as exc:
        raise InputError.single(f"not valid YAML: {exc}", file=path) from None
    if not isinstance(data, dict):
        raise InputError.single("a kubeconfig must be a map with clusters, users and contexts", file=path)
    current = context or data.get("current-context")
    contexts = {c.get("name"): c.get("context") or {} for c in data.get("contexts") or [] if isinstance(c, dict)}
    clusters = {c.get("name"): c.get("cluster") or {} for c in data.get("clusters") or [] if isinstance(c, dict)}
    if not isinstance(current, str) or not current:
        errors.add("current-context", "Required value: no current context is set")
    elif current not in contexts:
        where = "contexts" if context else "current-context"
        errors.add(where, f"context {current!r} is not defined under contexts")
    else:
        ctx = contexts[current]
        cluster_name = ctx.get("cluster") if isinstance(ctx, dict) else None
        if cluster_name not in clusters:
            errors.add(f"contexts[{current}].context.cluster", f"cluster {cluster_name!r} is not defined")
        else:
            cluster = clusters[cluster_name]
            server = cluster.get("server") if isinstance(cluster, dict) else None
            if not isinstance(server, str) or not server.startswith(("http://", "https://")):
                errors.add(
                    f"clusters[{cluster_name}].cluster.server",
                    f"Invalid value: {server!r}: must be an http:// or https:// URL",
                )
    errors.raise_if_any()


def client_configuration(kubeconfig: str | None, context: str | None = None) -> Any:
    """The client's Configuration from ``kubeconfig`` (its ``context``, or its current one), or from the pod's
    service account when None."""
    cfg = k8s_client.Configuration()
    if kubeconfig is None:
        try:
            k8s_config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        except k8s_config.ConfigException as exc:
            raise InputError.single(
                f"no --kubeconfig given and not running in a cluster ({exc}); pass --kubeconfig FILE"
            ) from None
        return cfg
    _check_kubeconfig(kubeconfig, context)
    try:
        k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, context=context, client_configuration=cfg, persist_config=False
        )
    except (k8s_config.ConfigException, ValueError, OSError) as exc:
        raise InputError.single(f"invalid kubeconfig: {exc}", file=kubeconfig) from None
    return cfg


def _status_error(status: int, reason: str, body: bytes) -> ApiError:
    message = body.decode("utf-8", "replace")[:500]
    try:
        data = json.loads(body)
        if isinstance(data, dict):
            message = str(data.get("message", message))
            reason = str(data.get("reason", reason) or reason)
    except ValueError:
        pass
    return ApiError(status, reason, message)


class KubernetesPort:
    """ApiPort over HTTP(S) through the official client's configuration and connection pool."""

    def __init__(
        self,
        configuration: Any,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        connect_timeout_s: float = 5.0,
        *,
        qps: float = DEFAULT_CLIENT_QPS,
        burst: int = DEFAULT_CLIENT_BURST,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        """``qps``/``burst``: the client's token bucket (clientConnection), shared by every request; events go
        through a second bucket of the same size, as kube-scheduler sends them with a client of their own.
        ``pool_size``: keep-alive connections kept per host (more concurrent requests open extra ones)."""
        self._cfg = configuration
        configuration.connection_pool_maxsize = pool_size
        self.limiter = TokenBucket(qps, burst)
        self.event_limiter = TokenBucket(qps, burst)
        self._api = k8s_client.ApiClient(configuration)
        self._pool: urllib3.PoolManager = self._api.rest_client.pool_manager
        self._host = str(configuration.host).rstrip("/")
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self._streams: set[Any] = set()  # open watch responses, cut by close()
        self._lock = threading.Lock()
        self._auth: dict[str, str] | None = None
        self._auth_at = 0.0
        self._lines: tuple[dict[str, str], dict[str | None, bytes]] | None = None  # header lines, by content type
        # every request but watches, unless the client goes through a proxy (packsched.live.http)
        self._lean: LeanClient | None = None
        if LeanClient.usable(self._pool):
            self._lean = LeanClient(self._pool, self._host, timeout_s, connect_timeout_s)
        self.transport = "lean" if self._lean is not None else "urllib3"

    @classmethod
    def connect(
        cls,
        kubeconfig: str | None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        qps: float = DEFAULT_CLIENT_QPS,
        burst: int = DEFAULT_CLIENT_BURST,
        pool_size: int = DEFAULT_POOL_SIZE,
        context: str | None = None,
    ) -> KubernetesPort:
        return cls(client_configuration(kubeconfig, context), timeout_s, qps=qps, burst=burst, pool_size=pool_size)

    @property
    def host(self) -> str:
        return self._host

    # -- transport ------------------------------------------------------------------------------------

    def _auth_headers(self) -> dict[str, str]:
        """The credentials' headers, asked of the client's configuration at most every AUTH_REFRESH_S (asking runs
        its token-refresh hook, which re-reads the kubeconfig: a large share of a request's CPU if done each time),
        and at once after a 401."""
        now = time.monotonic()
        with self._lock:
            if self._auth is not None and now - self._auth_at < AUTH_REFRESH_S:
                return self._auth
        headers: dict[str, str] = {}
        for setting in self._cfg.auth_settings().values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[str(setting["key"])] = str(setting["value"])
        if getattr(self._cfg, "username", None) or getattr(self._cfg, "password", None):
            headers["Authorization"] = str(self._cfg.get_basic_auth_token())
        with self._lock:
            self._auth, self._auth_at = headers, now
        return headers

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **self._auth_headers()}
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def _header_lines(self, content_type: str | None) -> bytes:
        """The request's header lines (CRLF-ended) for the lean client, made again when the credentials change."""
        auth = self._auth_headers()
        cached = self._lines
        if cached is None or cached[0] is not auth:
            cached = self._lines = (auth, {})
        lines = cached[1].get(content_type)
        if lines is None:
            headers = self._headers(content_type)
            if any(c in item for kv in headers.items() for item in kv for c in "\r\n"):
                raise ApiError(0, "InvalidHeader", "a credential header holds a line break")  # as http.client refuses
            text = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
            try:
                lines = text.encode("latin-1")
            except UnicodeEncodeError:
                raise ApiError(0, "InvalidHeader", "a credential header is not Latin-1 text") from None
            cached[1][content_type] = lines
        return lines

    def _throttle(self, path: str) -> None:
        (self.event_limiter if path.startswith(EVENTS.base()) else self.limiter).accept()

    def _open(
        self,
        method: str,
        path: str,
        query: dict[str, str] | None = None,
        body: Any = None,
        content_type: str | None = None,
        read_timeout: float | None = None,
    ) -> Any:
        url = self._host + path + ("?" + urlencode(query) if query else "")
        self._throttle(path)
        data = None if body is None else json.dumps(body).encode()
        try:
            resp = self._pool.request(
                method,
                url,
                body=data,
                headers=self._headers(content_type or ("application/json" if data is not None else None)),
                timeout=urllib3.Timeout(connect=self.connect_timeout_s, read=read_timeout or self.timeout_s),
                retries=False,
                preload_content=False,
            )
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ApiError(0, type(exc).__name__, str(exc)) from None
        if not 200 <= resp.status <= 299:
            if resp.status == 401:
                with self._lock:
                    self._auth = None  # an expired token: ask the configuration again next time
            try:
                payload = resp.read()
            except (urllib3.exceptions.HTTPError, OSError):
                payload = b""
            finally:
                resp.release_conn()
            raise _status_error(resp.status, resp.reason or "", payload)
        return resp

    def _request(
        self,
        method: str,
        path: str,
        query: dict[str, str] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> Obj:
        if self._lean is not None:
            status, payload = self._lean_request(method, path, query, body, content_type)
        else:
            resp = self._open(method, path, query, body, content_type)
            try:
                payload = resp.read()
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                raise ApiError(0, type(exc).__name__, str(exc)) from None
            finally:
                resp.release_conn()
            status = resp.status
        if not payload:
            return {}
        try:
            data = json.loads(payload)
        except ValueError as exc:
            raise ApiError(status, "BadResponse", f"not JSON: {exc}") from None
        return data if isinstance(data, dict) else {}

    def _lean_request(
        self, method: str, path: str, query: dict[str, str] | None, body: Any, content_type: str | None
    ) -> tuple[int, bytes]:
        """A request through the lean client: its status and body (an ApiError when it is not 2xx)."""
        assert self._lean is not None
        self._throttle(path)
        data = None if body is None else json.dumps(body).encode()
        lines = self._header_lines(content_type or ("application/json" if data is not None else None))
        try:
            answer = self._lean.request(method, path + ("?" + urlencode(query) if query else ""), lines, data)
        except NoAnswer as exc:
            raise ApiError(0, exc.reason, str(exc)) from None
        if not 200 <= answer.status <= 299:
            if answer.status == 401:
                with self._lock:
                    self._auth = None  # an expired token: ask the configuration again next time
            raise _status_error(answer.status, answer.reason, answer.body)
        return answer.status, answer.body

    # -- ApiPort ----------------------------------------------------------------------------------------

    def list(self, res: Resource, namespace: str = "") -> tuple[list[Obj], str]:
        data = self._request("GET", res.collection(namespace))
        items = data.get("items") or []
        for item in items:  # list items carry no apiVersion/kind; watch events do
            item.setdefault("apiVersion", res.api_version)
            item.setdefault("kind", res.kind)
        return items, str(data.get("metadata", {}).get("resourceVersion", ""))

    def list_page(
        self, res: Resource, namespace: str = "", limit: int = 0, continue_token: str = ""
    ) -> tuple[_Items, str, str]:
        """One page of a list (``limit`` objects at most; 0: all), from ``continue_token`` (the previous page's);
        answers the items, the list's resourceVersion and the token of the next page ("" after the last)."""
        query: dict[str, str] = {}
        if limit > 0:
            query["limit"] = str(limit)
        if continue_token:
            query["continue"] = continue_token
        data = self._request("GET", res.collection(namespace), query or None)
        items = data.get("items") or []
        for item in items:
            item.setdefault("apiVersion", res.api_version)
            item.setdefault("kind", res.kind)
        meta = data.get("metadata") or {}
        return items, str(meta.get("resourceVersion", "")), str(meta.get("continue") or "")

    def watch(self, res: Resource, resource_version: str, timeout_s: int) -> Iterator[WatchEvent]:
        query = {
            "watch": "true",
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_s),
        }
        if resource_version:
            query["resourceVersion"] = resource_version
        resp = self._open("GET", res.collection(), query, read_timeout=timeout_s + 30.0)
        with self._lock:
            self._streams.add(resp)
        buf = b""
        try:
            for chunk in resp.stream(65536, decode_content=True):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        yield self._event(line)
            if buf.strip():
                yield self._event(buf)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ApiError(0, type(exc).__name__, f"watch stream broke: {exc}") from None
        finally:
            with self._lock:
                self._streams.discard(resp)
            resp.release_conn()

    @staticmethod
    def _event(line: bytes) -> WatchEvent:
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise ApiError(0, "BadWatchEvent", f"not JSON: {exc}") from None
        etype = str(data.get("type", ""))
        obj = data.get("object") or {}
        if etype == ERROR:
            raise ApiError(int(obj.get("code", 500)), str(obj.get("reason", "")), str(obj.get("message", "")))
        if etype == BOOKMARK:
            return WatchEvent(BOOKMARK, obj)
        return WatchEvent(etype, obj)

    def get(self, res: Resource, namespace: str, name: str) -> Obj:
        return self._request("GET", res.item(namespace, name))

    def group_versions(self, group: str) -> tuple[str, ...]:
        try:
            data = self._request("GET", f"/apis/{group}")
        except ApiError as exc:
            if exc.not_found:
                return ()
            raise
        preferred = str((data.get("preferredVersion") or {}).get("version", ""))
        versions = [str(v.get("version", "")) for v in data.get("versions") or [] if isinstance(v, dict)]
        return tuple(sorted((v for v in versions if v), key=lambda v: v != preferred))

    def create(self, res: Resource, namespace: str, body: Obj) -> Obj:
        return self._request("POST", res.collection(namespace), body=body)

    def update(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        return self._request("PUT", res.item(namespace, name), body=body)

    def update_status(self, res: Resource, namespace: str, name: str, body: Obj) -> Obj:
        return self._request("PUT", res.item(namespace, name, "status"), body=body)

    def patch_status(self, res: Resource, namespace: str, name: str, patch: Obj) -> Obj:
        # Built-in kinds take a strategic merge patch (conditions merge by type); custom resources a merge patch.
        ctype = STRATEGIC_MERGE if res.group in BUILTIN_GROUPS else MERGE_PATCH
        return self._request("PATCH", res.item(namespace, name, "status"), body=patch, content_type=ctype)

    def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, **({"uid": uid} if uid else {})},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        # Success is a Status (kind: Status, status: Success), not the Binding: nothing to decode.
        answer = self._request("POST", PODS_PATH.format(ns=namespace, name=name) + "/binding", body=body)
        if answer.get("kind") == "Status" and answer.get("status") not in (None, "Success"):
            raise ApiError(int(answer.get("code", 500)), str(answer.get("reason", "")), str(answer.get("message")))

    def evict(self, namespace: str, name: str, uid: str) -> None:
        body: Obj = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        if uid:
            body["deleteOptions"] = {"preconditions": {"uid": uid}}
        self._request("POST", PODS_PATH.format(ns=namespace, name=name) + "/eviction", body=body)

    def delete(self, res: Resource, namespace: str, name: str, uid: str = "", grace_s: int | None = None) -> None:
        body: Obj = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if uid:
            body["preconditions"] = {"uid": uid}
        if grace_s is not None:
            body["gracePeriodSeconds"] = grace_s
        self._request("DELETE", res.item(namespace, name), body=body)

    def close(self) -> None:
        """Cut open watches (their readers get an error at once) and close idle connections."""
        with self._lock:
            streams = list(self._streams)
        for resp in streams:
            cut = getattr(resp, "shutdown", None)  # urllib3 >= 2.3 interrupts a blocked read
            try:
                if callable(cut):
                    cut()
                else:
                    resp.close()
            except (OSError, RuntimeError):
                pass  # the watch ended (and its connection went back to the pool) meanwhile
        self._pool.clear()
        if self._lean is not None:
            self._lean.close()
