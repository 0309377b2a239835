"""A client of the speech-emulator control plane (``/_emulator``, on every listener), standard library only.

    control = ControlClient("http://127.0.0.1:8900", token=os.environ.get("EMULATOR_CONTROL_TOKEN"))
    control.reset()
    control.clock.advance(60_000)

Every method sends one request and returns the parsed JSON answer (dicts and lists, with the control
plane's own field names), checked to be the shape the method returns. Every call ends by its deadline
(``timeout`` seconds, the whole answer and its body). Every failure raises ControlClientError naming the
URL and what came back: a status other than 2xx (with the control plane's message), an answer that is
not what the method returns (HTML, ``null``: a wrong URL never passes), or no whole answer (status 0).
A verification that does not hold raises VerificationError, whose message lists the nearest misses.
The names are those of the TypeScript client (``ControlError`` is kept as another name of ControlClientError).
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

#: Shown nearest misses in a VerificationError's message.
_SHOWN_MISSES = 3


def _excerpt(text: str, limit: int = 120) -> str:
    """The first characters of a text on one line, to show what came back."""
    line = " ".join(text.split())
    if not line:
        return "an empty body"
    return json.dumps(line[:limit] + "…" if len(line) > limit else line, ensure_ascii=False)


class ControlClientError(Exception):
    """A control-plane call that failed: a status other than 2xx, an answer of another shape, or no whole answer."""

    def __init__(self, status: int, message: str, body: Any, request: str, url: str = "", more: str = "") -> None:
        method = request.split(" ")[0]
        where = f"{method} {url}" if url else request
        super().__init__(f"{where}: {f'{status} ' if status else ''}{message}{more}")
        #: The HTTP status; 0 when no whole answer came (no connection, the deadline).
        self.status = status
        #: What went wrong alone (the control plane's ``error.message``, or what came back instead).
        self.detail = message
        #: The parsed JSON answer, or its text when it was not JSON (None when none came).
        self.body = body
        #: ``METHOD /_emulator/...``
        self.request = request
        #: The whole URL called.
        self.url = url


#: The name this client had first.
ControlError = ControlClientError


def _miss_line(miss: Dict[str, Any]) -> str:
    entry = miss.get("entry") or {}
    status = entry.get("status")
    differences = "; ".join(str(d) for d in miss.get("differences") or [])
    return f"  - {entry.get('method')} {entry.get('path')} ({entry.get('id')}, status {'none' if status is None else status}): {differences}"


class VerificationError(ControlClientError):
    """``POST /_emulator/verify`` answered 409: the count did not meet the expectation, or a budget did not hold."""

    def __init__(self, status: int, message: str, body: Dict[str, Any], request: str, url: str = "") -> None:
        misses: List[Dict[str, Any]] = body.get("near_misses") or []
        #: The budgets asked, as checked, when the count held and a budget did not (None otherwise).
        self.budgets: Optional[List[Dict[str, Any]]] = body.get("budgets")
        lines = [_miss_line(m) for m in misses[:_SHOWN_MISSES]]
        if len(misses) > _SHOWN_MISSES:
            lines.append(f"  (and {len(misses) - _SHOWN_MISSES} more in near_misses)")
        # A budget broken lists the requests over it; a count that did not hold, the nearest misses.
        if self.budgets is not None:
            heading = "over budget" if len(misses) == 1 else "over budget, worst first"
        else:
            heading = f"nearest {'miss' if len(misses) == 1 else 'misses'}"
        if misses:
            more = f"\n{heading}:\n" + "\n".join(lines)
        else:
            more = "" if self.budgets is not None else "\nno request in the journal to compare with"
        super().__init__(status, message, body, request, url, more)
        self.count: int = body.get("count", 0)
        self.expected: str = body.get("expected", "")
        self.near_misses: List[Dict[str, Any]] = misses


@dataclass(frozen=True)
class SpokenAudio:
    """The audio ``speak`` made, with what its headers say of it (the TypeScript client's SpokenAudio)."""

    #: The audio as it came (raw PCM16, WAV, MP3 or μ-law, as asked).
    audio: bytes
    content_type: str
    sample_rate: int
    duration_ms: int
    #: The signature of the synthesis, by which the emulator recognises the text.
    signature_id: str
    #: Where each impairment was put: ``voice_id``, ``speechRms``, ``noiseRms``, ``clippedSamples``, ``dropoutsAtMs``.
    impairments: Dict[str, Any]


class Reply:
    """One answer as it came: status, headers, bytes, and the parsed JSON (None when not JSON)."""

    def __init__(self, status: int, headers: Dict[str, str], raw: bytes, request: str, url: str) -> None:
        self.status = status
        self.headers = headers
        self.raw = raw
        self.text = raw.decode("utf-8", "replace")
        self.request = request
        self.url = url
        self.is_json = False
        self.body: Any = None
        if self.text.strip():
            try:
                self.body = json.loads(self.text)
                self.is_json = True
            except ValueError:
                pass

    def header(self, name: str) -> Optional[str]:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), None)


def _seg(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _sniff_audio(audio: bytes) -> Optional[str]:
    """What a hear body is, from its first bytes (raw PCM has no header: its content type must be given)."""
    if audio[:4] == b"RIFF" and audio[8:12] == b"WAVE":
        return "audio/wav"
    if audio[:4] == b"fLaC":
        return "audio/flac"
    if audio[:4] == b"OggS":
        return "audio/ogg"
    if audio[:3] == b"ID3" or (len(audio) > 1 and audio[0] == 0xFF and audio[1] & 0xE0 == 0xE0):
        return "audio/mpeg"
    return None


class ControlClient:
    """The control plane of one emulator, reached through any of its listeners."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 30.0) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"url must be an http(s) URL of an emulator listener (got {url!r})")
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds (got {timeout!r})")
        self.base_url = url.rstrip("/") + "/_emulator"
        self.token = token
        #: Each call's deadline in seconds, the whole answer and its body (a call's own ``timeout`` overrides it).
        self.timeout = timeout
        self.clock = _Clock(self)
        self.accounts = _Accounts(self)
        self.faults = _Faults(self)
        self.journal = _Journal(self)
        self.fixtures = _Fixtures(self)
        #: True once this client replayed or stopped tapes (the pytest fixture then puts the run's tapes back).
        self.tapes_touched = False

    # ---- transport ----

    def request(
        self,
        method: str,
        path: str,
        query: Optional[Dict[str, Any]] = None,
        body: Any = None,
        raw: Optional[Tuple[bytes, str]] = None,
        timeout: Optional[float] = None,
    ) -> Reply:
        """Any control-plane call, answered whatever its status. Raises ControlClientError (status 0)
        only when no whole answer came within the deadline (``timeout``, the client's by default)."""
        url = self.base_url + path
        pairs = {k: v for k, v in (query or {}).items() if v is not None}
        if pairs:
            url += ("&" if "?" in url else "?") + urllib.parse.urlencode(pairs, doseq=True)
        split = urllib.parse.urlsplit(url)
        target = split.path + (f"?{split.query}" if split.query else "")
        request = f"{method} {split.path}"
        headers = {"accept": "application/json"}
        if self.token is not None:
            headers["authorization"] = f"Bearer {self.token}"
        data = None
        if raw is not None:
            data, headers["content-type"] = raw
        elif body is not None:
            headers["content-type"] = "application/json"
            data = json.dumps(body).encode("utf-8")
        seconds = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + seconds
        status = 0

        def left() -> float:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise socket.timeout()
            return remaining

        kind = http.client.HTTPSConnection if split.scheme == "https" else http.client.HTTPConnection
        connection = kind(split.hostname or "", split.port, timeout=left())
        try:
            connection.request(method, target, body=data, headers=headers)
            # Kept: the connection lets go of its socket when the answer closes it.
            sock = connection.sock
            if sock is not None:
                sock.settimeout(left())
            res = connection.getresponse()
            status = res.status
            chunks: List[bytes] = []
            # Read piece by piece, each wait bounded by what is left: a trickling body ends at the deadline.
            while True:
                if sock is not None:
                    sock.settimeout(left())
                piece = res.read1(65536)
                if not piece:
                    break
                chunks.append(piece)
                left()
            return Reply(status, dict(res.getheaders()), b"".join(chunks), request, url)
        except (socket.timeout, TimeoutError):
            during = f"the body of a {status} answer" if status else "an answer"
            raise ControlClientError(0, f"no whole answer within {seconds:g} s (waiting for {during})", None, request, url) from None
        except (OSError, http.client.HTTPException) as err:
            why = type(err).__name__ + (f" ({err})" if str(err) else "")
            raise ControlClientError(0, f"no answer: {why}" if not status else f"a broken answer: {why}", None, request, url) from err
        finally:
            connection.close()

    def _send(
        self,
        method: str,
        path: str,
        query: Optional[Dict[str, Any]] = None,
        body: Any = None,
        accept: Tuple[int, ...] = (),
        raw: Optional[Tuple[bytes, str]] = None,
        timeout: Optional[float] = None,
    ) -> Reply:
        """One call; answers a 2xx (or accepted) answer, else raises the control plane's refusal."""
        reply = self.request(method, path, query, body, raw, timeout)
        if 200 <= reply.status < 300 or reply.status in accept:
            return reply
        parsed = reply.body if reply.is_json else reply.text
        error = parsed.get("error") if isinstance(parsed, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        if not isinstance(message, str):
            what = f"that is not JSON: {_excerpt(reply.text)}" if not reply.is_json else f"without a message: {_excerpt(reply.text)}"
            message = f"{reply.status} answer {what}"
        if reply.status == 409 and path == "/verify" and isinstance(parsed, dict) and isinstance(parsed.get("near_misses"), list):
            raise VerificationError(reply.status, message, parsed, reply.request, reply.url)
        raise ControlClientError(reply.status, message, parsed, reply.request, reply.url)

    def _json(
        self,
        method: str,
        path: str,
        query: Optional[Dict[str, Any]] = None,
        body: Any = None,
        what: str = "a JSON object",
        holds: Callable[[Dict[str, Any]], bool] = lambda b: True,
        timeout: Optional[float] = None,
        raw: Optional[Tuple[bytes, str]] = None,
    ) -> Any:
        """One call's JSON, checked to be ``what`` (``holds``): a wrong URL's HTML or ``null`` raises."""
        return _shaped(self._send(method, path, query, body, raw=raw, timeout=timeout), what, holds)

    # ---- probes ----

    def health(self, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Status and version; the service URLs too when the token is right (or none is set)."""
        return self._json("GET", "/health", what='the health answer {status: "ok", version}', holds=lambda b: b.get("status") == "ok" and isinstance(b.get("version"), str), timeout=timeout)

    def ready(self, timeout: Optional[float] = None) -> bool:
        reply = self._send("GET", "/readyz", accept=(503,), timeout=timeout)
        view = _shaped(reply, "the readiness answer {status, version}", lambda b: isinstance(b.get("status"), str))
        return reply.status == 200 and view["status"] == "ready"

    def wait_until_ready(self, timeout: float = 30.0, interval: float = 0.2) -> None:
        """Polls readyz until the emulator answers ready, until ``timeout`` seconds have passed: whatever
        fails before (no connection, a broken or trickling answer, a body that is not JSON) is tried again."""
        deadline = time.monotonic() + timeout
        last: Optional[BaseException] = None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                why = f"; last: {last}" if last else "; it answered not ready"
                raise ControlClientError(0, f"the emulator was not ready within {timeout:g} s{why}", None, "GET /_emulator/readyz", self.base_url + "/readyz")
            try:
                if self.ready(timeout=min(remaining, self.timeout)):
                    return
                last = None
            except ControlClientError as err:
                last = err
            time.sleep(max(0.0, min(interval, deadline - time.monotonic())))

    # ---- reset, verify, state ----

    def reset(self, fixtures: Optional[bool] = None) -> Dict[str, Any]:
        """Drops every resource, session, fault rule and journal entry; fixtures=True restores the start-up fixtures."""
        query = {"fixtures": None if fixtures is None else str(bool(fixtures)).lower()}
        return self._json("POST", "/reset", query, what='the reset answer {reset: "all"}', holds=lambda b: b.get("reset") == "all")

    def reset_account(self, key: str) -> Dict[str, Any]:
        """Drops what one API key owns."""
        return self._json("POST", "/reset", {"account": key}, what='the reset answer {reset: "account"}', holds=lambda b: b.get("reset") == "account")

    def verify(self, request: Dict[str, Any], timeout: Optional[float] = None) -> Dict[str, Any]:
        """``{"request": {...matcher}, "exactly"|"at_least"|"at_most": n, "budgets": {...}}``; raises
        VerificationError when it does not hold, its message listing the nearest misses (for a budget
        broken, ``{"first_audio_ms": {"p95": {"lte": 800}}}``, the requests over it)."""
        return self._json(
            "POST",
            "/verify",
            body=request,
            what="the verification {ok: true, count, expected}",
            holds=lambda b: b.get("ok") is True and isinstance(b.get("count"), int),
            timeout=timeout,
        )

    def tapes_check(self, dir: str, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Sends every tape of a folder (a path on the emulator's machine) to the emulator again and reports, per tape,
        where its own answer differs from the recorded one (``POST /_emulator/tapes/check``): ``{summary, tapes,
        differing, results: [{id, operation, differences: [{what, where?, recorded, emulator}]}]}``. Run it on an
        emulator that neither records nor replays."""
        return self._json(
            "POST",
            "/tapes/check",
            body={"dir": dir},
            what="the tapes check report {summary, tapes, differing, results}",
            holds=lambda b: isinstance(b.get("summary"), str) and isinstance(b.get("differing"), int) and isinstance(b.get("results"), list),
            timeout=timeout,
        )

    def tapes_replay(self, dir: str, strict: Optional[bool] = None, speed: Optional[float] = None) -> Dict[str, Any]:
        """Replays a folder of tapes (a path on the emulator's machine) from now on, as ``--replay``: requests that arrive
        after the answer, HTTP and sockets, are answered from its tapes (``PUT /_emulator/tapes/replay``). ``strict`` and
        ``speed`` are ``--replay-strict`` and ``--replay-speed``. A folder that is not one of tapes, or holds a damaged
        tape, raises (400, naming the file and what is wrong); an emulator that is recording refuses (409). Answers the
        tapes in effect, as ``tapes_loaded``."""
        self.tapes_touched = True
        body: Dict[str, Any] = {"dir": dir}
        if strict is not None:
            body["strict"] = bool(strict)
        if speed is not None:
            body["speed"] = speed
        return self._json("PUT", "/tapes/replay", body=body, what=_TAPES, holds=_is_tapes_view)

    def tapes_stop_replay(self) -> Dict[str, Any]:
        """Stops replaying: the emulator's own answers again (``DELETE /_emulator/tapes/replay``)."""
        self.tapes_touched = True
        return self._json("DELETE", "/tapes/replay", what=_TAPES, holds=_is_tapes_view)

    def tapes_loaded(self) -> Dict[str, Any]:
        """The tapes in effect (``GET /_emulator/tapes/replay``): ``{mode, dir, strict, speed, tapes}``, mode ``replay``,
        ``record``, ``record-missing`` or None."""
        return self._json("GET", "/tapes/replay", what=_TAPES, holds=_is_tapes_view)

    def hear(self, audio: bytes, content_type: Optional[str] = None, timeout: Optional[float] = None) -> Dict[str, Any]:
        """What a listener heard in a recording (``POST /_emulator/hear``): the emulator's syntheses found in it,
        the words heard with their times, and what differs (gaps, repeats, skips, cuts). WAV, MP3, FLAC and
        Ogg are told from their first bytes; raw PCM needs ``content_type="audio/pcm;rate=16000"``."""
        kind = content_type or _sniff_audio(bytes(audio))
        if kind is None:
            raise ValueError("hear: the audio is not WAV, MP3, FLAC or Ogg by its first bytes: give its content_type (e.g. audio/pcm;rate=16000)")
        return self._json(
            "POST",
            "/hear",
            raw=(bytes(audio), kind),
            what="what was heard {duration_ms, text, utterances, anomalies}",
            holds=lambda b: isinstance(b.get("text"), str) and isinstance(b.get("utterances"), list) and isinstance(b.get("anomalies"), list),
            timeout=timeout,
        )

    def speak(
        self,
        text: str,
        *,
        voice_id: Optional[str] = None,
        language: Optional[str] = None,
        format: Optional[str] = None,
        sample_rate: Optional[int] = None,
        seed: Optional[str] = None,
        leading_silence_ms: Optional[int] = None,
        gain_db: Optional[float] = None,
        clip: Optional[float] = None,
        noise_db: Optional[float] = None,
        dropouts: Optional[int] = None,
        dropout_ms: Optional[int] = None,
        codec: Optional[str] = None,
        timeout: Optional[float] = None,
    ) -> SpokenAudio:
        """A caller's audio with seeded impairments (``POST /_emulator/speak``); the emulator recognises its
        text exactly. ``format``: pcm (default), wav, mp3, pcmu_raw, pcmu_wav; ``codec``: mulaw or mp3.
        A field the control plane refuses raises ControlClientError (400) naming it."""
        fields = {
            "text": text,
            "voice_id": voice_id,
            "language": language,
            "format": format,
            "sample_rate": sample_rate,
            "seed": seed,
            "leading_silence_ms": leading_silence_ms,
            "gain_db": gain_db,
            "clip": clip,
            "noise_db": noise_db,
            "dropouts": dropouts,
            "dropout_ms": dropout_ms,
            "codec": codec,
        }
        reply = self._send("POST", "/speak", body={k: v for k, v in fields.items() if v is not None}, timeout=timeout)
        kind = reply.header("content-type") or ""
        described = reply.header("x-emulator-impairments")
        impairments: Any = None
        if described:
            try:
                impairments = json.loads(described)
            except ValueError:
                impairments = None
        if not kind.startswith("audio/") or not isinstance(impairments, dict):
            raise ControlClientError(reply.status, f"expected audio with X-Emulator-Impairments, got {kind or 'no content type'} — is this the URL of an emulator?", reply.text, reply.request, reply.url)
        return SpokenAudio(
            audio=reply.raw,
            content_type=kind,
            sample_rate=int(reply.header("x-audio-sample-rate") or 0),
            duration_ms=int(reply.header("x-audio-duration-ms") or 0),
            signature_id=reply.header("x-emulator-signature") or "",
            impairments=impairments,
        )

    def report(self, **filters: Any) -> Dict[str, Any]:
        """The latency figures of the journal's audio streams (``GET /_emulator/report``): per operation and for
        all entries selected, time to first audio, turn latency, real-time factor, overrun, time to stop, gaps
        and stalls, with nearest-rank p50/p95/p99. Takes the filters of ``journal.list``."""
        return self._json("GET", "/report", self.journal.params(**filters), what="the latency report {all, operations}", holds=lambda b: isinstance(b.get("all"), dict) and isinstance(b.get("operations"), list))

    def state(self, limit: Optional[int] = None, cursor: Optional[str] = None) -> Dict[str, Any]:
        return self._json("GET", "/state", {"limit": limit, "cursor": cursor}, what="the state {accounts: [...]}", holds=lambda b: isinstance(b.get("accounts"), list))

    # ---- metrics and documents ----

    def metrics(self) -> str:
        reply = self._send("GET", "/metrics")
        if not (reply.header("content-type") or "").startswith("text/plain"):
            raise ControlClientError(reply.status, f"expected Prometheus text, got {reply.header('content-type') or 'no content type'} — is this the URL of an emulator?", reply.text, reply.request, reply.url)
        return reply.text

    def openapi(self, name: str) -> Dict[str, Any]:
        """``speech``, ``platform`` or ``control``."""
        return self._json("GET", f"/openapi/{_seg(name)}.json", what="an OpenAPI document", holds=lambda b: isinstance(b.get("openapi"), str))

    def asyncapi(self) -> Dict[str, Any]:
        return self._json("GET", "/asyncapi.json", what="an AsyncAPI document", holds=lambda b: isinstance(b.get("asyncapi"), str))


def _shaped(reply: Reply, what: str, holds: Callable[[Dict[str, Any]], bool]) -> Any:
    """The JSON of a 2xx answer when it is ``what``; else ControlClientError naming the URL and what came back."""
    if not reply.is_json:
        kind = reply.header("content-type") or "no content type"
        raise ControlClientError(reply.status, f"expected {what}, got a body that is not JSON ({kind}): {_excerpt(reply.text)} — is this the URL of an emulator?", reply.text, reply.request, reply.url)
    try:
        ok = isinstance(reply.body, dict) and bool(holds(reply.body))
    except Exception:  # a field of an unexpected type
        ok = False
    if not ok:
        raise ControlClientError(reply.status, f"expected {what}, got {_excerpt(reply.text)} — is this the URL of an emulator?", reply.body, reply.request, reply.url)
    return reply.body


_CLOCK = "the clock {now_ms, frozen}"
_ACCOUNT = "an account {account, balance_micro, ...}"
_DELETED = "the deletion {deleted}"
_FIXTURE = "a fixture {name, source, content}"


_TAPES = "the tapes in effect {mode, dir, strict, speed, tapes}"


def _is_tapes_view(b: Dict[str, Any]) -> bool:
    return "mode" in b and "dir" in b and isinstance(b.get("tapes"), int)


def _is_clock(b: Dict[str, Any]) -> bool:
    return isinstance(b.get("now_ms"), int) and isinstance(b.get("frozen"), bool)


def _is_account(b: Dict[str, Any]) -> bool:
    return isinstance(b.get("account"), str) and isinstance(b.get("balance_micro"), int)


def _is_deleted(b: Dict[str, Any]) -> bool:
    return isinstance(b.get("deleted"), str)


def _is_fixture(b: Dict[str, Any]) -> bool:
    return isinstance(b.get("name"), str) and "content" in b


def _audio(reply: Reply) -> Tuple[bytes, str]:
    """The audio of an answer and its content type; another content type (a wrong URL's page) raises."""
    kind = reply.header("content-type") or "no content type"
    if not kind.startswith("audio/"):
        raise ControlClientError(reply.status, f"expected audio, got {kind} — is this the URL of an emulator?", reply.text, reply.request, reply.url)
    return reply.raw, kind


class _Part:
    def __init__(self, client: ControlClient) -> None:
        self._c = client


class _Clock(_Part):
    def read(self) -> Dict[str, Any]:
        return self._c._json("GET", "/clock", what=_CLOCK, holds=_is_clock)

    def change(self, **change: Any) -> Dict[str, Any]:
        """``advance_ms``, ``freeze``, ``set_ms``: applied as freeze, set, advance, unfreeze."""
        return self._c._json("POST", "/clock", body=change, what=_CLOCK, holds=_is_clock)

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
        return self._c._json("GET", f"/accounts/{_seg(key)}", what=_ACCOUNT, holds=_is_account)

    def put(self, key: str, **settings: Any) -> Dict[str, Any]:
        """balance_micro, free_call_seconds, capabilities, project, disabled, real_name_verified, limits."""
        return self._c._json("PUT", f"/accounts/{_seg(key)}", body=settings, what=_ACCOUNT, holds=_is_account)


class _Faults(_Part):
    def add(self, rule: Dict[str, Any]) -> Dict[str, Any]:
        """``{"path": ..., "fault": {"code": 1002}}``; answers ``{"id", "rule"}``."""
        return self._c._json("POST", "/faults", body=rule, what="the added rule {id, rule}", holds=lambda b: isinstance(b.get("id"), str))

    def list(self) -> List[Dict[str, Any]]:
        return self._c._json("GET", "/faults", what="the rules {rules: [...]}", holds=lambda b: isinstance(b.get("rules"), list))["rules"]

    def clear(self) -> Dict[str, Any]:
        return self._c._json("DELETE", "/faults", what=_DELETED, holds=_is_deleted)

    def remove(self, rule_id: str) -> Dict[str, Any]:
        return self._c._json("DELETE", f"/faults/{_seg(rule_id)}", what=_DELETED, holds=_is_deleted)


class _Journal(_Part):
    def params(
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
    ) -> Dict[str, Any]:
        """A journal query as URL parameters (the journal's list and the report take the same)."""
        return {
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
        params = self.params(limit, path, account, listener, method, status, code, header, query, fault, since_ms, until_ms)
        return self._c._json("GET", "/journal", params, what="the journal {entries: [...]}", holds=lambda b: isinstance(b.get("entries"), list))["entries"]

    def get(self, entry_id: str) -> Dict[str, Any]:
        return self._c._json("GET", f"/journal/{_seg(entry_id)}", what="a journal entry {id, path, ...}", holds=lambda b: isinstance(b.get("id"), str))

    def clear(self) -> Dict[str, Any]:
        return self._c._json("DELETE", "/journal", what=_DELETED, holds=_is_deleted)

    def client_audio(self, entry_id: str) -> bytes:
        """The audio a client streamed on a socket, as WAV."""
        return _audio(self._c._send("GET", f"/journal/{_seg(entry_id)}/audio.wav"))[0]

    def answer_audio(self, entry_id: str) -> Tuple[bytes, str]:
        """The audio an answer carried as hex, and its content type."""
        return _audio(self._c._send("GET", f"/journal/{_seg(entry_id)}/answer-audio"))


class _Fixtures(_Part):
    def list(self) -> List[Dict[str, Any]]:
        return self._c._json("GET", "/fixtures", what="the fixtures {fixtures: [...]}", holds=lambda b: isinstance(b.get("fixtures"), list))["fixtures"]

    def get(self, name: str) -> Dict[str, Any]:
        return self._c._json("GET", f"/fixtures/{_seg(name)}", what=_FIXTURE, holds=_is_fixture)

    def put(self, name: str, content: Any) -> Dict[str, Any]:
        """Replaces a fixture file now; a refused one changes nothing (ControlError 400)."""
        return self._c._json("PUT", f"/fixtures/{_seg(name)}", body=content, what=_FIXTURE, holds=_is_fixture)
