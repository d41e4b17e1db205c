"""Attacks on the masking of a FaaS call's secrets in the platform log: a secret printed
right where the output is cut (the 48 KB head, the 16 KB tail) or where a failure's
stack is cut. No piece of the value may reach the log. The log is read whole from an
embedded platform's file (serve's stderr and the log table print an entry's start only,
each within a cap of its own)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from basedb.platform import LocalPlatform
from basedb.platform.domain.runtimes.faas import FaasLimits, FaasRuntime
from basedb.platform.domain.runtimes.faas.outcome import CallLog
from basedb.platform.storage import platform_log
from basedb.protocol import ApiFailure
from tests.platform.conftest import Api
from tests.platform.test_faas_access import run as run_in
from tests.platform.test_faas_access import runtime
from tests.platform.test_faas_runtime import needs_node

__all__ = ["runtime"]

SECRET = "sk_live_Zq7vK2pLm9Xw4TfB"
HEAD, TAIL = FaasLimits().log_head_bytes, FaasLimits().log_tail_bytes


def run(platform: LocalPlatform, api: Api, runtime: FaasRuntime, source: str, log: Path,
        **kwargs: Any) -> Any:
    """The call, its platform log written whole to `log`."""
    with platform_log.logging_to(log):
        return run_in(platform, api, runtime, source, **kwargs)


def pieces(text: str, size: int = 6) -> list[str]:
    """Every run of `size` characters of the secret that shows up in `text`."""
    return [SECRET[i:i + size] for i in range(len(SECRET) - size + 1)
            if SECRET[i:i + size] in text]


@needs_node
def test_a_secret_across_either_cut_of_the_output_is_masked(
        platform: LocalPlatform, api: Api, runtime: FaasRuntime, tmp_path: Path) -> None:
    # The first copy starts 8 bytes before the head's cap, the second ends 8 bytes into
    # the tail's last TAIL bytes; between them more than both caps is dropped.
    data = run(platform, api, runtime, f"""
        export default async () => {{
          const key = process.env.API_KEY;
          process.stderr.write("a".repeat({HEAD - 8}) + key + "b".repeat({HEAD + TAIL})
                               + key + "c".repeat({TAIL - 8}));
          return {{code: 0, data: null}};
        }}""", tmp_path / "platform.log", secrets={"API_KEY": SECRET}, declared=("API_KEY",))
    assert data is None
    log = (tmp_path / "platform.log").read_text(encoding="utf-8")
    assert "bytes of output dropped" in log
    assert pieces(log) == []
    assert log.count("***") == 2


@needs_node
def test_a_secret_across_the_cut_of_a_failure_stack_is_masked(
        platform: LocalPlatform, api: Api, runtime: FaasRuntime, tmp_path: Path) -> None:
    with pytest.raises(ApiFailure):
        run(platform, api, runtime, """
            export default async () => {
              throw new Error("d".repeat(16000 - "Error: ".length - 8) + process.env.API_KEY);
            }""", tmp_path / "platform.log", secrets={"API_KEY": SECRET},
               declared=("API_KEY",))
    log = (tmp_path / "platform.log").read_text(encoding="utf-8")
    assert "ddddd" in log
    assert pieces(log) == []


@pytest.mark.parametrize("at", [HEAD - 20, HEAD - 1, HEAD, HEAD + 5])
def test_the_call_log_masks_before_it_cuts(at: int) -> None:
    """The cut itself, byte by byte around the head's cap, fed in small chunks."""
    log = CallLog(HEAD, TAIL, (SECRET,))
    output = ("x" * at + SECRET + "y" * (2 * TAIL) + SECRET).encode()
    for start in range(0, len(output), 4000):
        log.add(output[start:start + 4000])
    text = log.text()
    assert pieces(text) == []
    assert text.endswith("***")
