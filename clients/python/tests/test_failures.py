"""The client against servers that misbehave (made here, on real sockets), and the fixture's stop of an
emulator started through a wrapper that does not pass SIGTERM on (as npx does not)."""

import os
import shlex
import socket
import threading
import time
import urllib.request

import pytest

from speech_emulator import ControlClient, ControlClientError, ControlError, VerificationError, local_command, start


class RawServer:
    """A loopback server that reads each request's head, then lets ``behave(conn, n)`` answer (n: the request's index)."""

    def __init__(self, behave):
        self.behave = behave
        self.count = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.conns = []
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            n, self.count = self.count, self.count + 1
            threading.Thread(target=self._serve, args=(conn, n), daemon=True).start()

    def _serve(self, conn, n):
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                piece = conn.recv(65536)
                if not piece:
                    return
                data += piece
            self.behave(conn, n)
        except OSError:
            pass

    def close(self):
        self.closed.set()
        self.sock.close()
        for c in self.conns:
            try:
                c.close()
            except OSError:
                pass


def answer(status, content_type, body, close=True):
    raw = body.encode() if isinstance(body, str) else body

    def behave(conn, _n):
        conn.sendall(f"HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {len(raw)}\r\nconnection: close\r\n\r\n".encode() + raw)
        if close:
            conn.close()

    return behave


def never(conn, _n):
    time.sleep(60)


def trickle(conn, _n):
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n")
    for _ in range(2000):
        conn.sendall(b" ")
        time.sleep(0.1)


@pytest.fixture
def server():
    made = []

    def make(behave):
        s = RawServer(behave)
        made.append(s)
        return s.url

    yield make
    for s in made:
        s.close()


def test_a_json_error_string_is_the_message_not_an_attribute_error(server):
    url = server(answer(502, "application/json", '{"error": "Bad gateway"}'))
    with pytest.raises(ControlClientError) as failed:
        ControlClient(url).reset()
    assert failed.value.status == 502 and failed.value.detail == "Bad gateway"
    assert str(failed.value) == f"POST {url}/_emulator/reset: 502 Bad gateway"
    assert ControlError is ControlClientError


def test_an_html_page_names_the_url_and_what_came_back(server):
    url = server(answer(200, "text/html", "<!doctype html><h1>Welcome to nginx!</h1>"))
    with pytest.raises(ControlClientError) as failed:
        ControlClient(url).health()
    message = str(failed.value)
    assert message.startswith(f"GET {url}/_emulator/health: 200 expected the health answer")
    assert 'not JSON (text/html): "<!doctype html><h1>Welcome to nginx!</h1>"' in message
    page = server(answer(503, "text/html", "<html>Service Unavailable</html>"))
    with pytest.raises(ControlClientError) as refused:
        ControlClient(page).clock.read()
    assert refused.value.detail == '503 answer that is not JSON: "<html>Service Unavailable</html>"'


def test_a_200_null_fails_verify_and_every_method(server):
    url = server(answer(200, "application/json", "null"))
    client = ControlClient(url)
    with pytest.raises(ControlClientError) as failed:
        client.verify({"request": {"path": "/v1/t2a_v2"}, "exactly": 1})
    assert str(failed.value) == f'POST {url}/_emulator/verify: 200 expected the verification {{ok: true, count, expected}}, got "null" — is this the URL of an emulator?'
    for call in (client.reset, client.state, client.faults.list, client.journal.list, lambda: client.clock.advance(1), client.ready, client.metrics):
        with pytest.raises(ControlClientError):
            call()


def test_a_server_that_never_answers_fails_at_the_deadline(server):
    url = server(never)
    started = time.monotonic()
    with pytest.raises(ControlClientError) as failed:
        ControlClient(url, timeout=0.5).health()
    assert 0.4 < time.monotonic() - started < 3
    assert failed.value.status == 0
    assert str(failed.value) == f"GET {url}/_emulator/health: no whole answer within 0.5 s (waiting for an answer)"


def test_a_trickling_body_respects_the_whole_deadline(server):
    url = server(trickle)
    started = time.monotonic()
    with pytest.raises(ControlClientError) as failed:
        ControlClient(url, timeout=5).verify({"request": {}})
    assert 4.5 < time.monotonic() - started < 7
    assert str(failed.value).endswith("no whole answer within 5 s (waiting for the body of a 200 answer)")
    started = time.monotonic()
    with pytest.raises(ControlClientError):
        ControlClient(url).wait_until_ready(timeout=1.5)
    assert time.monotonic() - started < 4


def test_wait_until_ready_retries_broken_answers_until_ready(server):
    ready = '{"status":"ready","version":"0"}'

    def flaky(conn, n):
        if n == 0:
            conn.sendall(b"garbage\r\n\r\n")  # BadStatusLine
        elif n == 1:
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{")  # IncompleteRead
        elif n == 2:
            answer(200, "application/json", '{"status": "rea')(conn, n)  # not JSON
        elif n == 3:
            answer(503, "application/json", '{"status":"starting","version":"0"}')(conn, n)
        else:
            answer(200, "application/json", ready)(conn, n)
        conn.close()

    url = server(flaky)
    ControlClient(url).wait_until_ready(timeout=20, interval=0.05)
    broken = server(lambda conn, n: conn.sendall(b"garbage\r\n\r\n") or conn.close())
    started = time.monotonic()
    with pytest.raises(ControlClientError) as failed:
        ControlClient(broken).wait_until_ready(timeout=1, interval=0.05)
    assert time.monotonic() - started >= 1
    assert "was not ready within 1 s; last:" in str(failed.value) and "BadStatusLine" in str(failed.value)


def test_verify_names_its_nearest_misses(emulator):
    body = b'{"model":"speech-02-turbo","text":"Near miss.","voice_setting":{"voice_id":"male-qn-qingse"}}'
    request = urllib.request.Request(emulator.speech_url + "/v1/t2a_v2", data=body, method="POST", headers={"authorization": "Bearer py-near", "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as res:
        res.read()
    with pytest.raises(VerificationError) as failed:
        emulator.control.verify({"request": {"path": "/v1/t2a_v2", "code": 1002}, "exactly": 1})
    message = str(failed.value)
    assert message.startswith(f"POST {emulator.control.base_url}/verify: 409 expected exactly 1 matching request, found 0\nnearest miss:\n")
    assert message.endswith("(status 200): code: expected 1002, got 0") or "status 200): code: expected 1002, got 0" in message


def test_hear_finds_the_emulators_synthesis(emulator):
    text = "Python hears this sentence."
    body = ('{"model":"speech-02-turbo","text":"%s","voice_setting":{"voice_id":"male-qn-qingse"},"audio_setting":{"format":"wav","sample_rate":16000}}' % text).encode()
    request = urllib.request.Request(emulator.speech_url + "/v1/t2a_v2", data=body, method="POST", headers={"authorization": "Bearer py-hear", "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as res:
        import json

        answer_body = json.loads(res.read())
    wav = bytes.fromhex(answer_body["data"]["audio"])
    heard = emulator.control.hear(wav)
    assert [u["full_text"] for u in heard["utterances"]] == [text]
    assert heard["utterances"][0]["complete"] is True and heard["anomalies"] == []
    pcm = wav[44:]
    with pytest.raises(ValueError):
        emulator.control.hear(pcm)
    cut = emulator.control.hear(pcm[: 16000 * 2], content_type="audio/pcm;rate=16000")
    assert cut["utterances"][0]["complete"] is False and "cut" in [a["kind"] for a in cut["anomalies"]]
    with pytest.raises(ControlClientError) as refused:
        emulator.control.hear(b"\x00\x01\x02", content_type="audio/wav")
    assert refused.value.status == 400


def _refused(url):
    host, port = url.split("//")[1].split(":")
    try:
        socket.create_connection((host, int(port)), timeout=1).close()
        return False
    except OSError:
        return True


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="process groups are POSIX")
def test_close_stops_an_emulator_behind_a_wrapper_that_keeps_sigterm():
    # As npx does: the command runs the emulator as its child and does not pass SIGTERM on (a shell that waits).
    inner = shlex.join(shlex.split(os.environ["SPEECH_EMULATOR_COMMAND"]) if os.environ.get("SPEECH_EMULATOR_COMMAND") else local_command())
    emulator = start(["sh", "-c", f'{inner} "$@" & wait', "sh"], timeout=90)
    assert emulator.control.ready() is True
    emulator.close(timeout=15)
    deadline = time.monotonic() + 5
    while not _refused(emulator.speech_url) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _refused(emulator.speech_url), "the emulator behind the wrapper still listens"
