"""A screen reader's view of the compositor's dialog, through AT-SPI (pyatspi), for tests/a11y.rs.

Usage: a11y_reader.py APP ACTION REQUESTER APPROVE DENY NEXT_ACTION LAST_ACTION

It talks to the test on stdin/stdout, one line each way per phase:
  prints READY        once the compositor's application is on the accessibility bus and the
                      announcements are listened to; waits for SUBMITTED;
  prints FOUND        once the dialog is read (role alert, its name, the requester, both
                      buttons, Deny enabled at once and Approve not before the click guard);
                      waits for TABBED (the seat gave the dialog the keyboard and pressed Tab);
  prints ACTED TEXT   once it saw the focus on Deny, asked for focus and a press on Approve,
                      saw the focus stay on Deny and heard TEXT announced, saying how to
                      answer instead; waits for DECIDED;
  prints EMPTIED TEXT once the dialog left the tree and TEXT was announced; waits for QUEUED
                      (two more prompts, NEXT_ACTION shown and LAST_ACTION behind it);
  prints BADGE        once it read NEXT_ACTION's dialog and its queue badge; waits for DENIED
                      (the seat denied NEXT_ACTION);
  prints NEXT         once it heard NEXT_ACTION's denial announced, then LAST_ACTION's prompt,
                      in that order, and read LAST_ACTION's dialog; then exits 0.
Any check that fails prints FAIL and a reason and exits 1.
"""

import sys
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, GLib  # noqa: E402

import pyatspi  # noqa: E402

WAIT_S = 20.0

app_name, action, requester, approve_label, deny_label, next_action, last_action = sys.argv[1:8]
context = GLib.MainContext.default()
announcements = []


def say(line):
    print(line, flush=True)


def fail(why):
    say("FAIL " + why)
    sys.exit(1)


def on_announcement(event):
    announcements.append(str(event.any_data))


pyatspi.Registry.registerEventListener(on_announcement, "object:announcement")


def pump(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        while context.iteration(False):
            pass
        time.sleep(0.02)


def wait_for(what, check):
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        found = check()
        if found:
            return found
        pump(0.1)
    fail("timed out waiting for " + what)


def app():
    desktop = pyatspi.Registry.getDesktop(0)
    for i in range(desktop.childCount):
        a = desktop.getChildAtIndex(i)
        if a is not None and a.name == app_name:
            Atspi.Accessible.clear_cache(a)
            return a
    return None


def walk(node):
    yield node
    for i in range(node.childCount):
        child = node.getChildAtIndex(i)
        if child is not None:
            yield from walk(child)


def find(root, pred):
    for n in walk(root):
        if pred(n):
            return n
    return None


def dialog():
    a = app()
    if a is None:
        return None
    return find(a, lambda n: n.getRole() in (pyatspi.ROLE_ALERT, pyatspi.ROLE_DIALOG))


def button(d, label):
    return find(d, lambda n: n.getRole() == pyatspi.ROLE_PUSH_BUTTON and n.name == label)


def focused(n):
    return n.getState().contains(pyatspi.STATE_FOCUSED)


# Phase 0: the compositor is on the bus, with no dialog.
wait_for("the application " + app_name, app)
if dialog() is not None:
    fail("a dialog is in the tree before any prompt")
say("READY")
if sys.stdin.readline().strip() != "SUBMITTED":
    fail("the test did not submit")

# Phase 1: the dialog as read.
d = wait_for("the dialog (role alert) in " + app_name, dialog)
for n in walk(d):
    print(f"read: {n.getRoleName()} {n.name!r} {n.description!r}", file=sys.stderr)
if d.name != action:
    fail(f"the dialog is named {d.name!r}, not the action {action!r}")
if requester not in d.description:
    fail(f"the description {d.description!r} does not name the requester {requester!r}")
if not d.getState().contains(pyatspi.STATE_MODAL):
    fail("the dialog is not modal")
texts = [n.name for n in walk(d)]
if not any(requester in t for t in texts):
    fail(f"no node names the requester: {texts!r}")
approve = button(d, approve_label)
deny = button(d, deny_label)
if approve is None or deny is None:
    fail(f"both buttons are not there: {texts!r}")
# Before the click guard arms: a refusal never waits for it, an approval does.
if not deny.getState().contains(pyatspi.STATE_ENABLED):
    fail("Deny is not enabled as soon as the dialog is shown")
if approve.getState().contains(pyatspi.STATE_ENABLED):
    fail("Approve is enabled before the click guard armed")
shown = wait_for("the shown announcement", lambda: [a for a in announcements if action in a])
say("FOUND " + shown[0])
if sys.stdin.readline().strip() != "TABBED":
    fail("the test did not press Tab")

# Phase 2: the focus follows the seat; assistive software cannot move it or press Approve.
wait_for("the focus on Deny", lambda: focused(button(dialog(), deny_label)))
approve = button(dialog(), approve_label)
if focused(approve):
    fail("Approve has the focus after one Tab")
heard_before = len(announcements)
approve.queryComponent().grabFocus()
approve.queryAction().doAction(0)
pump(1.0)
d = dialog()
if d is None:
    fail("the dialog went away after doAction on Approve")
if not focused(button(d, deny_label)) or focused(button(d, approve_label)):
    fail("the focus moved after grabFocus on Approve")
refused = wait_for(
    "the announcement of how to answer instead",
    lambda: [a for a in announcements[heard_before:] if "assistive software" in a],
)
say("ACTED " + refused[-1])
if sys.stdin.readline().strip() != "DECIDED":
    fail("the test did not decide")

# Phase 3: the tree empties and the outcome is announced.
wait_for("the dialog to leave the tree", lambda: app() is not None and dialog() is None)
said = wait_for(
    "the outcome's announcement",
    lambda: [a for a in announcements if action in a and a != shown[0]],
)
say("EMPTIED " + said[-1])
if sys.stdin.readline().strip() != "QUEUED":
    fail("the test did not queue two prompts")

# Phase 4: a queue. The badge is read; a denial followed at once by the next prompt is heard
# in full: both announcements, in order.
d = wait_for("the next dialog", lambda: (lambda d: d if d and d.name == next_action else None)(dialog()))
badge = wait_for(
    "the queue badge",
    lambda: find(d, lambda n: n.getRole() == pyatspi.ROLE_STATUS_BAR and n.name == "1 more waiting"),
)
say("BADGE")
if sys.stdin.readline().strip() != "DENIED":
    fail("the test did not deny")
wait_for("the last dialog", lambda: (lambda d: d if d and d.name == last_action else None)(dialog()))


def heard_in_order():
    denied = [i for i, a in enumerate(announcements) if a == "Denied: " + next_action]
    shown = [i for i, a in enumerate(announcements) if a == "Confirmation needed: " + last_action]
    return denied and shown and denied[0] < shown[-1]


wait_for(f"the denial, then the next prompt, announced: {announcements!r}", heard_in_order)
say("NEXT")
