"""The client and the fixture against a real emulator (started by the fixture, or the one SPEECH_EMULATOR_URL names)."""

import json
import urllib.request
from pathlib import Path

import pytest

from speech_emulator import ControlClient, ControlError, VerificationError, connect, local_command


def t2a(emulator, key, text="Hello from Python."):
    body = {"model": "speech-02-turbo", "text": text, "voice_setting": {"voice_id": "male-qn-qingse"}}
    request = urllib.request.Request(
        emulator.speech_url + "/v1/t2a_v2",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"authorization": f"Bearer {key}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as res:
        return json.loads(res.read())


def test_fixture_yields_the_three_urls_and_a_ready_client(emulator):
    for url in (emulator.speech_url, emulator.speech_backup_url, emulator.platform_url):
        assert url.startswith("http://127.0.0.1:")
    health = emulator.control.health()
    assert health["status"] == "ok" and health["ready"] is True
    assert health["services"]["platform"] == emulator.platform_url
    assert emulator.control.ready() is True


def test_journal_and_verify_see_a_synthesis(emulator):
    answer = t2a(emulator, "py-key")
    assert answer["base_resp"]["status_code"] == 0
    entries = emulator.control.journal.list(path="/v1/t2a_v2", account="py-key")
    assert len(entries) == 1 and entries[0]["status"] == 200
    assert emulator.control.journal.get(entries[0]["id"])["request"]["body"]["text"] == "Hello from Python."
    audio, content_type = emulator.control.journal.answer_audio(entries[0]["id"])
    assert content_type == "audio/mpeg" and len(audio) == answer["extra_info"]["audio_size"]
    assert emulator.control.verify({"request": {"path": "/v1/t2a_v2", "code": 0}, "exactly": 1}) == {"ok": True, "count": 1, "expected": "exactly 1"}
    with pytest.raises(VerificationError) as failed:
        emulator.control.verify({"request": {"path": "/v1/t2a_v2"}, "exactly": 2})
    assert failed.value.status == 409 and failed.value.count == 1
    assert failed.value.detail == "expected exactly 2 matching requests, found 1"


def test_journal_filters_and_verify_see_a_faulted_request_whole(emulator):
    body = {"model": "speech-02-turbo", "text": "Boom", "voice_setting": {"voice_id": "male-qn-qingse"}}
    request = urllib.request.Request(
        emulator.speech_backup_url + "/v1/t2a_v2?tag=py",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"authorization": "Bearer py-key", "content-type": "application/json", "x-emulator-fault": "code=1002", "x-request-id": "py-1"},
    )
    with urllib.request.urlopen(request, timeout=30) as res:
        assert json.loads(res.read())["base_resp"]["status_code"] == 1002
    entries = emulator.control.journal.list(listener="speech-backup", header={"X-Request-Id": "py-1"}, query={"tag": "py"}, fault=True)
    assert len(entries) == 1 and entries[0]["fault"] == {"origin": "header", "code": 1002}
    assert emulator.control.journal.list(fault=False) == []
    assert emulator.control.verify({"request": {"listener": "speech-backup", "code": 1002, "body": {"text": "Boom"}, "fault": True}, "exactly": 1})["count"] == 1


def test_each_test_starts_from_a_reset_emulator(emulator):
    assert emulator.control.journal.list() == []


def test_clock_faults_accounts_state_fixtures(emulator):
    assert emulator.control.clock.freeze()["frozen"] is True
    assert emulator.control.clock.set(1_700_000_000_000) == {"now_ms": 1_700_000_000_000, "frozen": True}
    assert emulator.control.clock.advance(500)["now_ms"] == 1_700_000_000_500
    with pytest.raises(ControlError) as refused:
        emulator.control.clock.change(advance_ms=-1)
    assert refused.value.status == 400 and refused.value.detail.startswith("clock field advance_ms: ")

    rule = emulator.control.faults.add({"path": "/v1/t2a_v2", "fault": {"code": 1002}})
    assert [r["id"] for r in emulator.control.faults.list()] == [rule["id"]]
    assert t2a(emulator, "py-faulty")["base_resp"]["status_code"] == 1002
    assert emulator.control.faults.list() == []
    assert emulator.control.faults.clear() == {"deleted": "all"}

    assert emulator.control.accounts.put("py-poor", balance_micro=0)["balance_micro"] == 0
    assert t2a(emulator, "py-poor")["base_resp"]["status_code"] == 1008
    assert emulator.control.accounts.get("py-poor")["balance_micro"] == 0
    assert emulator.control.reset_account("py-poor")["reset"] == "account"
    assert emulator.control.state()["totals"]["fault_rules"] == 0

    put = emulator.control.fixtures.put("content-safety.json", {"terms": ["pyforbidden"]})
    assert put["source"] == "run time"
    assert "content-safety.json" in [f["name"] for f in emulator.control.fixtures.list()]
    assert emulator.control.reset(fixtures=True)["fixtures_restored"] == ["content-safety.json"]
    assert emulator.control.fixtures.get("content-safety.json")["source"] != "run time"
    assert emulator.control.openapi("control")["openapi"] == "3.1.0"
    assert "# TYPE" in emulator.control.metrics()


def test_by_url_with_and_without_the_token(speech_emulator):
    token = speech_emulator.control.token
    reached = connect(speech_emulator.platform_url, token=token, timeout=5)
    assert (reached.speech_url, reached.platform_url) == (speech_emulator.speech_url, speech_emulator.platform_url)
    assert reached.close() is None  # not started here: nothing to stop
    anonymous = ControlClient(speech_emulator.speech_url)
    assert "services" not in anonymous.health()
    with pytest.raises(ControlError) as denied:
        anonymous.state()
    assert denied.value.status == 401
    assert str(denied.value) == f"GET {speech_emulator.speech_url}/_emulator/state: 401 control plane needs Authorization: Bearer <EMULATOR_CONTROL_TOKEN>"
    with pytest.raises(ValueError):
        ControlClient("localhost:8900")


def test_local_command_finds_this_checkout():
    here = Path(__file__).resolve()
    command = local_command(here.parent)
    root = next(p for p in here.parents if (p / "package.json").is_file())
    assert command[-1] in (str(root / "dist" / "main.js"), str(root / "src" / "main.ts"))


def test_tapes_check_reports_on_a_folder(emulator, tmp_path):
    report = emulator.control.tapes_check(str(tmp_path))
    assert report == {"summary": "0 tapes checked: 0 the same, 0 differ", "tapes": 0, "differing": 0, "results": []}
    with pytest.raises(ControlError) as refused:
        emulator.control.tapes_check(str(tmp_path / "missing"))
    assert refused.value.status == 400 and "tapes check field dir" in str(refused.value)
