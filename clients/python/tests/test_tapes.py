"""Tapes in Python suites: recorded through an emulator from a second one standing for the real service (a voice
only it knows), then replayed with that upstream stopped: loaded by the control client at run time, by the runner's
``replay=`` (``--replay``), and by the pytest option ``--speech-emulator-replay`` of the fixture."""

import json
import os
import shlex
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from speech_emulator import ControlClientError, connect, local_command, start

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM_VOICE = "py-upstream-voice"
T2A = {"model": "speech-02-turbo", "text": "Recorded once from Python.", "voice_setting": {"voice_id": UPSTREAM_VOICE}}


def command():
    configured = os.environ.get("SPEECH_EMULATOR_COMMAND")
    return shlex.split(configured) if configured else local_command()


def t2a(base_url, body=T2A, key="py-tape-key"):
    request = urllib.request.Request(
        base_url + "/v1/t2a_v2",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"authorization": f"Bearer {key}", "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


@pytest.fixture(scope="module")
def tapes(tmp_path_factory):
    """A folder with one T2A tape in the upstream's voice, and the audio the upstream answered."""
    fixtures = tmp_path_factory.mktemp("upstream-fixtures")
    voices = json.loads((ROOT / "fixtures" / "speech-voices.json").read_text(encoding="utf-8"))
    voices.append({"voice_id": UPSTREAM_VOICE, "voice_name": "Upstream only", "description": "A voice of the upstream only.", "language": "English"})
    (fixtures / "speech-voices.json").write_text(json.dumps(voices), encoding="utf-8")
    folder = tmp_path_factory.mktemp("tapes")
    upstream = start([*command(), "--seed", "py-upstream", "--fixtures-dir", str(fixtures)], timeout=90)
    try:
        recorder = start([*command(), "--record", str(folder), "--upstream-speech", upstream.speech_url], timeout=90)
        try:
            status, answer = t2a(recorder.speech_url)
        finally:
            recorder.close()
    finally:
        upstream.close()
    assert status == 200 and answer["base_resp"]["status_code"] == 0
    assert len([p for p in folder.iterdir() if p.suffix == ".json"]) == 1
    return folder, answer["data"]["audio"]


def test_control_client_replays_a_folder_at_run_time_and_stops(tapes):
    folder, audio = tapes
    emulator = start(command(), timeout=90)
    try:
        control = emulator.control
        # Its own rules first: the upstream's voice is unknown here.
        assert control.tapes_loaded() == {"mode": None, "dir": None, "strict": False, "speed": None, "tapes": 0}
        assert t2a(emulator.speech_url)[1]["base_resp"]["status_code"] == 2054
        assert control.tapes_replay(str(folder), speed=0) == {"mode": "replay", "dir": str(folder), "strict": False, "speed": 0, "tapes": 1}
        status, answer = t2a(emulator.speech_url)
        assert status == 200 and answer["data"]["audio"] == audio
        assert control.journal.list(path="/v1/t2a_v2")[0]["tape"]["mode"] == "replayed"
        assert control.tapes_stop_replay()["mode"] is None
        assert t2a(emulator.speech_url)[1]["base_resp"]["status_code"] == 2054

        # A folder that is not one of tapes is refused, and what its files hold is never repeated.
        (folder.parent / "not-tapes").mkdir(exist_ok=True)
        (folder.parent / "not-tapes" / "secrets.json").write_text('{"token": "PY-SECRET-42"}', encoding="utf-8")
        with pytest.raises(ControlClientError) as refused:
            control.tapes_replay(str(folder.parent / "not-tapes"))
        assert refused.value.status == 400
        assert refused.value.detail == "tapes replay field dir: the folder is not a folder of tapes: it holds a .json file without the tape format's version field"
        assert "PY-SECRET" not in str(refused.value)
        assert control.tapes_loaded()["mode"] is None

        # A running emulator reached by URL is told over its control plane; restore_tapes puts the run's setting back.
        reached = connect(emulator.platform_url, replay=str(folder), replay_strict=True)
        assert control.tapes_loaded() == {"mode": "replay", "dir": str(folder), "strict": True, "speed": 1, "tapes": 1}
        assert t2a(emulator.speech_url)[1]["data"]["audio"] == audio
        reached.replay = None
        reached.restore_tapes()
        assert control.tapes_loaded()["mode"] is None
    finally:
        emulator.close()


def test_runner_starts_an_emulator_replaying_strictly(tapes):
    folder, audio = tapes
    emulator = start(command(), timeout=90, replay=str(folder), replay_strict=True)
    try:
        assert emulator.control.tapes_loaded() == {"mode": "replay", "dir": str(folder), "strict": True, "speed": 1, "tapes": 1}
        status, answer = t2a(emulator.speech_url)
        assert status == 200 and answer["data"]["audio"] == audio
        # Strict: a request no tape matches is refused in the operation's shape, naming the field that differs.
        status, answer = t2a(emulator.speech_url, {**T2A, "text": "Never recorded."})
        assert status == 404 and answer["base_resp"]["status_msg"].startswith("replay: no tape matches POST /v1/t2a_v2; nearest: ")
        assert "body.text" in answer["base_resp"]["status_msg"]
    finally:
        emulator.close()


def test_pytest_option_replays_for_the_run_and_the_fixture_puts_the_tapes_back(tapes, tmp_path):
    folder, audio = tapes
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["speech_emulator.pytest_plugin"]\n', encoding="utf-8")
    (tmp_path / "test_replayed.py").write_text(
        textwrap.dedent(
            f"""
            import json, urllib.error, urllib.request

            def t2a(emulator, text):
                body = {{"model": "speech-02-turbo", "text": text, "voice_setting": {{"voice_id": "{UPSTREAM_VOICE}"}}}}
                request = urllib.request.Request(emulator.speech_url + "/v1/t2a_v2", data=json.dumps(body).encode(), method="POST",
                                                 headers={{"authorization": "Bearer k", "content-type": "application/json"}})
                try:
                    with urllib.request.urlopen(request, timeout=30) as res:
                        return res.status, json.loads(res.read())
                except urllib.error.HTTPError as err:
                    return err.code, json.loads(err.read())

            def test_1_the_run_replays(emulator):
                assert emulator.control.tapes_loaded()["strict"] is True
                status, answer = t2a(emulator, "{T2A['text']}")
                assert status == 200 and answer["data"]["audio"] == "{audio}"
                assert t2a(emulator, "Never recorded.")[0] == 404

            def test_2_a_test_stops_the_replay(emulator):
                emulator.control.tapes_stop_replay()
                assert t2a(emulator, "{T2A['text']}")[1]["base_resp"]["status_code"] == 2054

            def test_3_the_next_test_has_the_runs_tapes_again(emulator):
                assert emulator.control.tapes_loaded()["mode"] == "replay"
                assert t2a(emulator, "{T2A['text']}")[1]["data"]["audio"] == "{audio}"
            """
        ),
        encoding="utf-8",
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "clients" / "python"), os.environ.get("PYTHONPATH", "")]),
        "SPEECH_EMULATOR_URL": "",
        "SPEECH_EMULATOR_COMMAND": shlex.join(command()),
    }
    run = subprocess.run(
        [sys.executable, "-m", "pytest", str(tmp_path), "-q", "-p", "no:cacheprovider", "--speech-emulator-replay", str(folder), "--speech-emulator-replay-strict"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 passed" in run.stdout
