"""speak (a caller's audio), report (the latency figures) and verify's budgets, against a real emulator."""

import io
import json
import urllib.request
import wave

import pytest

from speech_emulator import ControlClient, ControlClientError, SpokenAudio, VerificationError

from test_failures import answer, server  # noqa: F401  (a misbehaving server, made on a real socket)

TEXT = "I would like to change my booking to Friday morning."


def test_speak_makes_a_callers_audio_that_hear_recognises_with_its_impairments(emulator):
    spoken = emulator.control.speak(TEXT, format="wav", noise_db=15, dropouts=3, seed="py")
    assert isinstance(spoken, SpokenAudio)
    assert spoken.content_type == "audio/wav" and spoken.sample_rate == 16000
    with wave.open(io.BytesIO(spoken.audio)) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        assert abs(w.getnframes() * 1000 / 16000 - spoken.duration_ms) <= 1
    assert len(spoken.impairments["dropoutsAtMs"]) == 3 and spoken.impairments["noiseRms"] > 0
    assert spoken.signature_id

    heard = emulator.control.hear(spoken.audio)
    assert heard["utterances"][0]["full_text"] == TEXT
    assert heard["word_error_rate"] == 0
    kinds = [i["kind"] for i in heard["line"]["impairments"]]
    assert "noise" in kinds and abs(heard["line"]["snr_db"] - 15) <= 2.5

    # The same request and seed give the same bytes; raw PCM at 8 kHz μ-law is what a phone line sends.
    assert emulator.control.speak(TEXT, format="wav", noise_db=15, dropouts=3, seed="py").audio == spoken.audio
    phone = emulator.control.speak(TEXT, format="pcmu_raw")
    assert phone.content_type == "audio/basic" and phone.sample_rate == 8000 and abs(len(phone.audio) - phone.duration_ms * 8) <= 8


def test_speak_refusals_name_the_field(emulator):
    with pytest.raises(ControlClientError) as refused:
        emulator.control.speak(TEXT, noise_db=3)
    assert refused.value.status == 400 and "noise_db" in refused.value.detail
    with pytest.raises(ControlClientError) as refused:
        emulator.control.speak(TEXT, format="pcmu_raw", sample_rate=16000)
    assert refused.value.status == 400 and refused.value.detail.startswith("speak field sample_rate:")


def test_speak_refuses_an_answer_that_is_not_a_callers_audio(server):
    # A server that answers JSON where audio is due: the client says what came back, never returns it.
    url = server(answer(200, "application/json", "{}"))
    with pytest.raises(ControlClientError) as failed:
        ControlClient(url).speak(TEXT)
    assert failed.value.detail == "expected audio with X-Emulator-Impairments, got application/json — is this the URL of an emulator?"


def stream_t2a(emulator, ttfa_ms):
    body = {"model": "speech-02-turbo", "text": "Hello from a paced stream.", "stream": True, "voice_setting": {"voice_id": "male-qn-qingse"}}
    request = urllib.request.Request(
        emulator.speech_url + "/v1/t2a_v2",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"authorization": "Bearer py-report", "content-type": "application/json", "x-emulator-fault": f"ttfa_ms={ttfa_ms}"},
    )
    with urllib.request.urlopen(request, timeout=30) as res:
        res.read()


def test_report_and_budgets(emulator):
    for ttfa in (100, 300):
        stream_t2a(emulator, ttfa)
    entries = emulator.control.journal.list(path="/v1/t2a_v2")
    firsts = sorted(e["delivery"]["first_audio_ms"] for e in entries)
    assert firsts[0] >= 100 and firsts[1] >= 300
    report = emulator.control.report(path="/v1/t2a_v2")
    assert report["percentile_method"] == "nearest-rank"
    [operation] = report["operations"]
    assert operation["count"] == 2 and operation["figures"]["first_audio_ms"]["p50"] == firsts[0]
    assert operation["figures"]["first_audio_ms"]["p95"] == firsts[1]

    ok = emulator.control.verify({"request": {"path": "/v1/t2a_v2"}, "budgets": {"first_audio_ms": {"max": {"lte": 5000}}}})
    assert ok["budgets"][0]["ok"] is True
    with pytest.raises(VerificationError) as over:
        emulator.control.verify({"request": {"path": "/v1/t2a_v2"}, "budgets": {"first_audio_ms": {"p95": {"lte": 200}}}})
    assert over.value.status == 409 and over.value.budgets[0]["ok"] is False
    # The requests over budget, worst first.
    assert "over budget" in str(over.value) and over.value.near_misses[0]["entry"]["delivery"]["first_audio_ms"] == firsts[1]
