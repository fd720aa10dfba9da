"""A tiny agent, as an agent developer would write one: it asks the compositor before acting,
through `pcpctl submit` (pcp-confirm's command-line client, which speaks the pcp-intent-v1
Wayland protocol), and acts only on an approval. Any language can do the same from a subprocess.
"""

import json
import os
import subprocess


class Agent:
    """Submits intents to the compositor named by `WAYLAND_DISPLAY` in `env`."""

    def __init__(self, pcpctl, env=None):
        self.pcpctl = pcpctl
        self.env = dict(os.environ if env is None else env)

    def ask(self, capability, params):
        """Waits for the user's decision on one intent; returns it as a dict
        (approved, resolution, reason, token, threshold, modalities)."""
        done = subprocess.run(
            [self.pcpctl, "submit", capability, "--params", json.dumps(params)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        # pcpctl exits 0 when approved and 1 when denied, printing the decision either way;
        # anything else is an error of its own.
        if done.returncode not in (0, 1) or not done.stdout.strip():
            raise RuntimeError(f"pcpctl submit failed ({done.returncode}): {done.stderr}")
        return json.loads(done.stdout)

    def save_notes(self, path, text):
        """A privileged write: only with the user's approval, whose token the executor checks."""
        decision = self.ask("notes.save", {"path": path})
        if decision["approved"]:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return decision

    def delete(self, path):
        """A destructive delete: the user must say yes and click Approve."""
        decision = self.ask("file.delete", {"path": path})
        if decision["approved"] and os.path.exists(path):
            os.remove(path)
        return decision

    def log_out(self):
        """A system action."""
        return self.ask("session.logout", {})
