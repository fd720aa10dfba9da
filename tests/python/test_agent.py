"""The agent of agent.py tested against the real gate in pcp-harness: a scripted user approves a
privileged write (its token verifies), says "네" and clicks for a destructive delete (approved),
only clicks for another (denied: voice never answered), and leaves a system action alone
(confirmation.timeout). Every decision is checked in the harness's JSON lines.

Run by `cargo xtask test`; by hand: `python3 -m unittest discover -s tests/python -v` with
PCP_HARNESS and PCPCTL naming the binaries (default: the cargo target folder's debug builds) and
PCP_CACHE_DIR the cache `cargo xtask setup` filled (the Vosk model).
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from agent import Agent  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug"
HARNESS = os.environ.get("PCP_HARNESS", str(TARGET / "examples" / "pcp-harness"))
PCPCTL = os.environ.get("PCPCTL", str(TARGET / "pcpctl"))

MANIFEST = """
[[capability]]
name = "notes.save"
version = 1
side_effects = "write"
auth_level = "privileged"
description = "Save notes to {path}"
target = "{path}"
salient = ["path"]
params = ["path"]
"""

USER = """
[[answer]]
capability = "notes.save"
do = "approve"

# A spoken "yes" (and the dialog's challenge word, when it shows one), then a click.
[[answer]]
capability = "file.delete"
params = { path = "*/draft.txt" }
do = ["say", "approve"]
say = "네, {challenge}"

# Only a click: the voice half of a destructive prompt is never answered.
[[answer]]
capability = "file.delete"
do = "approve"

[[answer]]
capability = "session.*"
do = "nothing"
"""


class HarnessRun:
    """pcp-harness running with a scripted user, its JSON lines read on a thread."""

    def __init__(self, folder):
        folder = Path(folder)
        manifests = folder / "manifests"
        manifests.mkdir(mode=0o700)
        (manifests / "60-agent.toml").write_text(MANIFEST)
        user = folder / "user.toml"
        user.write_text(USER)
        self.process = subprocess.Popen(
            [HARNESS, "--user", str(user), "--manifests", str(manifests),
             "--state", str(folder / "state.sqlite3")],
            stdout=subprocess.PIPE,
            text=True,
        )
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.ready = self.next("ready", timeout=120)

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def next(self, event, timeout=60):
        """The next JSON line of `event`, skipping the others."""
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise AssertionError(f"pcp-harness ended before a `{event}` line")
            if line["event"] == event:
                return line

    def env(self):
        env = dict(os.environ)
        env["WAYLAND_DISPLAY"] = self.ready["wayland_display"]
        env["XDG_RUNTIME_DIR"] = self.ready["xdg_runtime_dir"]
        return env

    def stop(self):
        self.process.terminate()
        exit_line = self.next("exit")
        self.process.wait(timeout=30)
        self.reader.join(timeout=30)
        self.process.stdout.close()
        return exit_line


class AgentTest(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.harness = HarnessRun(self.folder.name)
        self.agent = Agent(PCPCTL, self.harness.env())

    def tearDown(self):
        if self.harness.process.poll() is None:
            self.harness.process.kill()
            self.harness.process.wait(timeout=30)
        self.harness.process.stdout.close()
        self.folder.cleanup()

    def decision_line(self, capability):
        line = self.harness.next("decision")
        self.assertEqual(line["capability"], capability)
        return line

    def test_the_agent_against_a_scripted_user(self):
        folder = Path(self.folder.name)
        self.assertTrue(self.harness.ready["voice"])

        # A privileged write: approved with a token the executor's check accepts once.
        notes = folder / "notes.txt"
        decision = self.agent.save_notes(str(notes), "groceries")
        self.assertEqual(decision["resolution"], "user_approved", decision)
        self.assertEqual(notes.read_text(), "groceries")
        line = self.decision_line("notes.save")
        self.assertEqual((line["resolution"], line["user"], line["scripted"]),
                         ("user_approved", ["approve"], True))
        self.assertEqual(line["threshold"], "visual")
        verify = [PCPCTL, "token", "verify", decision["token"], "--capability", "notes.save",
                  "--params", json.dumps({"path": str(notes)}),
                  "--config", self.harness.ready["config"],
                  "--state", self.harness.ready["state"]]
        checked = subprocess.run(verify, capture_output=True, text=True, timeout=60)
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
        self.assertIn("valid: notes.save v1", checked.stdout)
        again = subprocess.run(verify, capture_output=True, text=True, timeout=60)
        self.assertEqual((again.returncode, again.stdout.strip()), (1, "replayed"))

        # A destructive delete: "네" spoken into the microphone, then a click.
        draft = folder / "draft.txt"
        draft.write_text("old")
        decision = self.agent.delete(str(draft))
        self.assertEqual(decision["resolution"], "user_approved", decision)
        self.assertEqual(decision["modalities"], ["voice", "visual"])
        self.assertFalse(draft.exists())
        line = self.decision_line("file.delete")
        self.assertEqual(line["resolution"], "user_approved")
        self.assertTrue(line["user"][0].startswith("say 네"), line["user"])
        self.assertEqual(line["user"][1], "approve")
        results = {r["modality"]: r["result"] for r in line["modality_results"]}
        self.assertEqual(results, {"voice": "approve", "visual": "approve"})

        # The same delete with a click but no voice: denied, the file stays.
        report = folder / "report.pdf"
        report.write_text("keep")
        decision = self.agent.delete(str(report))
        self.assertFalse(decision["approved"], decision)
        self.assertEqual(decision["resolution"], "confirmation.timeout", decision)
        self.assertTrue(report.exists())
        line = self.decision_line("file.delete")
        self.assertEqual((line["resolution"], line["user"], line["approved"]),
                         ("confirmation.timeout", ["approve"], False))

        # A system action left unanswered: denied at its timeout.
        decision = self.agent.log_out()
        self.assertEqual(decision["resolution"], "confirmation.timeout", decision)
        line = self.decision_line("session.logout")
        self.assertEqual((line["user"], line["scripted"]), (["nothing"], True))

        self.assertEqual(self.harness.stop()["event"], "exit")
        self.assertEqual(self.harness.process.returncode, 0)


if __name__ == "__main__":
    unittest.main()
