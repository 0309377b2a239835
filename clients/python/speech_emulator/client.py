"""A client of the speech-emulator control plane (``/_emulator``, on every listener), standard library only.

    control = ControlClient("http://127.0.0.1:8900", token=os.environ.get("EMULATOR_CONTROL_TOKEN"))
    control.reset()
    control.clock.advance(60_000)

Every method sends one request and returns the parsed JSON answer (dicts and lists, with the control
plane's own field names). An answer other than 2xx raises ControlError with the status and the control
plane's message; a verification that does not hold raises VerificationError with the near misses.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple, Union


class ControlError(Exception):
    """An answer of the control plane other than 2xx."""

    def __init__(self, status: int, message: str, body: Any, request: str) -> None:
        super().__init__(f"{request}: {status} {message}")
        self.status = status
        #: The control plane's message alone (``error.message``).
        self.detail = message
        #: The parsed JSON answer, or its text when it was not JSON.
        self.body = body
        #: ``METHOD /_emulator/...``
        self.request = request


class VerificationError(ControlError):
    """``POST /_emulator/verify`` answered 409: the count did not meet the expectation."""

    def __init__(self, status: int, message: str, body: Dict[str, Any], request: str) -> None:
        super().__init__(status, message, body, request)
        self.count: int = body.get("count", 0)
        self.expected: str = body.get("expected", "")
        self.near_misses: List[Dict[str, Any]] = body.get("near_misses", [])


def _seg(value: str) -> str:
    return urllib.parse.quote(value, safe="")


class ControlClient:
    """The control plane of one emulator, reached through any of its listeners."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 30.0) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http(s) URL of an emulator listener (got {url!r})")
        self.base_url = url.rstrip("/") + "/_emulator"
        self.token = token
        self.timeout = timeout
        self.clock = _Clock(self)
        self.accounts = _Accounts(self)
        self.faults = _Faults(self)
        self.journal = _Journal(self)
        self.fixtures = _Fixtures(self)

    # ---- transport ----

    def _send(
        self,
        method: str,
        path: str,
        query: Optional[Dict[str, Any]] = None,
        body: Any = None,
        accept: Tuple[int, ...] = (),
    ) -> Tuple[int, Dict[str, str], bytes]:
        url = self.base_url + path
        pairs = {k: v for k, v in (query or {}).items() if v is not None}
        if pairs:
            url += "?" + urllib.parse.urlencode(pairs, doseq=True)
        headers = {"accept": "application/json"}
        if self.token is not None:
            headers["authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            headers["content-type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as res:
                return res.status, dict(res.headers.items()), res.read()
        except urllib.error.HTTPError as err:
            raw = err.read()
            if err.code in accept:
                return err.code, dict(err.headers.items()), raw
            self._raise(method, path, err.code, err.reason, raw)
            raise  # unreachable: _raise always raises

    def _raise(self, method: str, path: str, status: int, reason: str, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace")
        try:
            parsed: Any = json.loads(text)
        except ValueError:
            parsed = text
        message = parsed.get("error", {}).get("message") if isinstance(parsed, dict) else None
        detail = message if isinstance(message, str) else f"{status} {reason}".strip()
        request = f"{method} {urllib.parse.urlsplit(self.base_url).path}{path}"
        if status == 409 and path == "/verify" and isinstance(parsed, dict):
            raise VerificationError(status, detail, parsed, request)
        raise ControlError(status, detail, parsed, request)

    def _json(self, method: str, path: str, query: Optional[Dict[str, Any]] = None, body: Any = None) -> Any:
        _status, _headers, raw = self._send(method, path, query, body)
        return json.loads(raw.decode("utf-8"))

    # ---- probes ----

    def health(self) -> Dict[str, Any]:
        """Status and version; the service URLs too when the token is right (or none is set)."""
        return self._json("GET", "/health")

    def ready(self) -> bool:
        status, _headers, raw = self._send("GET", "/readyz", accept=(503,))
        return status == 200 and json.loads(raw.decode("utf-8")).get("status") == "ready"

    def wait_until_ready(self, timeout: float = 30.0, interval: float = 0.2) -> None:
        """Polls readyz until the emulator answers ready (connection errors included)."""
        deadline = time.monotonic() + timeout
        last: Optional[BaseException] = None
        while True:
            try:
                if self.ready():
                    return
                last = None
            except (OSError, ControlError) as err:
                last = err
            if time.monotonic() >= deadline:
                why = f": {last}" if last else ""
                raise TimeoutError(f"the emulator at {self.base_url} was not ready within {timeout} s{why}")
            time.sleep(interval)

    # ---- reset, verify, state ----

    def reset(self, fixtures: Optional[bool] = None) -> Dict[str, Any]:
        """Drops every resource, session, fault rule and journal entry; fixtures=True restores the start-up fixtures."""
        return self._json("POST", "/reset", {"fixtures": None if fixtures is None else str(bool(fixtures)).lower()})

    def reset_account(self, key: str) -> Dict[str, Any]:
        """Drops what one API key owns."""
        return self._json("POST", "/reset", {"account": key})

    def verify(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """``{"request": {...matcher}, "exactly"|"at_least"|"at_most": n}``; raises VerificationError when it does not hold."""
        return self._json("POST", "/verify", body=request)

    def state(self) -> Dict[str, Any]:
        return self._json("GET", "/state")

    # ---- metrics and documents ----

    def metrics(self) -> str:
        return self._send("GET", "/metrics")[2].decode("utf-8")

    def openapi(self, name: str) -> Dict[str, Any]:
        """``speech``, ``platform`` or ``control``."""
        return self._json("GET", f"/openapi/{_seg(name)}.json")

    def asyncapi(self) -> Dict[str, Any]:
        return self._json("GET", "/asyncapi.json")


class _Part:
    def __init__(self, client: ControlClient) -> None:
        self._c = client


class _Clock(_Part):
    def read(self) -> Dict[str, Any]:
        return self._c._json("GET", "/clock")

    def change(self, **change: Any) -> Dict[str, Any]:
        """``advance_ms``, ``freeze``, ``set_ms``: applied as freeze, set, advance, unfreeze."""
        return self._c._json("POST", "/clock", body=change)

    def freeze(self) -> Dict[str, Any]:
        return self.change(freeze=True)

    def unfreeze(self) -> Dict[str, Any]:
        return self.change(freeze=False)

    def advance(self, ms: int) -> Dict[str, Any]:
        return self.change(advance_ms=ms)

    def set(self, ms: int) -> Dict[str, Any]:
        return self.change(set_ms=ms)


class _Accounts(_Part):
    def get(self, key: str) -> Dict[str, Any]:
        return self._c._json("GET", f"/accounts/{_seg(key)}")

    def put(self, key: str, **settings: Any) -> Dict[str, Any]:
        """balance_micro, free_call_seconds, capabilities, project, disabled, real_name_verified, limits."""
        return self._c._json("PUT", f"/accounts/{_seg(key)}", body=settings)


class _Faults(_Part):
    def add(self, rule: Dict[str, Any]) -> Dict[str, Any]:
        """``{"path": ..., "fault": {"code": 1002}}``; answers ``{"id", "rule"}``."""
        return self._c._json("POST", "/faults", body=rule)

    def list(self) -> List[Dict[str, Any]]:
        return self._c._json("GET", "/faults")["rules"]

    def clear(self) -> Dict[str, Any]:
        return self._c._json("DELETE", "/faults")

    def remove(self, rule_id: str) -> Dict[str, Any]:
        return self._c._json("DELETE", f"/faults/{_seg(rule_id)}")


class _Journal(_Part):
    def list(
        self,
        limit: Optional[int] = None,
        path: Optional[str] = None,
        account: Optional[str] = None,
        listener: Optional[str] = None,
        method: Optional[str] = None,
        status: Optional[int] = None,
        code: Optional[Union[int, str]] = None,
        header: Optional[Dict[str, str]] = None,
        query: Optional[Dict[str, str]] = None,
        fault: Optional[bool] = None,
        since_ms: Optional[int] = None,
        until_ms: Optional[int] = None,
    ) -> List[Dict[str, Any]]:
        """Entries newest first, filtered by path, API key, listener, method, status, spec code, request
        headers and query parameters (subsets), whether a fault was injected, and a window on the
        emulator clock (since_ms <= at_ms < until_ms)."""
        params: Dict[str, Any] = {
            "limit": limit,
            "path": path,
            "account": account,
            "listener": listener,
            "method": method,
            "status": status,
            "code": code,
            "fault": None if fault is None else ("true" if fault else "false"),
            "since_ms": since_ms,
            "until_ms": until_ms,
            # Headers and query parameters travel as repeated name:value parameters.
            "header": [f"{k}:{v}" for k, v in header.items()] if header else None,
            "query": [f"{k}:{v}" for k, v in query.items()] if query else None,
        }
        return self._c._json("GET", "/journal", params)["entries"]

    def get(self, entry_id: str) -> Dict[str, Any]:
        return self._c._json("GET", f"/journal/{_seg(entry_id)}")

    def clear(self) -> Dict[str, Any]:
        return self._c._json("DELETE", "/journal")

    def client_audio(self, entry_id: str) -> bytes:
        """The audio a client streamed on a socket, as WAV."""
        return self._c._send("GET", f"/journal/{_seg(entry_id)}/audio.wav")[2]

    def answer_audio(self, entry_id: str) -> Tuple[bytes, str]:
        """The audio an answer carried as hex, and its content type."""
        _status, headers, raw = self._c._send("GET", f"/journal/{_seg(entry_id)}/answer-audio")
        content_type = next((v for k, v in headers.items() if k.lower() == "content-type"), "application/octet-stream")
        return raw, content_type


class _Fixtures(_Part):
    def list(self) -> List[Dict[str, Any]]:
        return self._c._json("GET", "/fixtures")["fixtures"]

    def get(self, name: str) -> Dict[str, Any]:
        return self._c._json("GET", f"/fixtures/{_seg(name)}")

    def put(self, name: str, content: Any) -> Dict[str, Any]:
        """Replaces a fixture file now; a refused one changes nothing (ControlError 400)."""
        return self._c._json("PUT", f"/fixtures/{_seg(name)}", body=content)
