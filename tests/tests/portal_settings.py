"""The XDG settings portal's interface for tests/contrast.rs: org.freedesktop.portal.Settings at
/org/freedesktop/portal/desktop, owning org.freedesktop.portal.Desktop on the session bus, with
the one setting the compositor reads, org.freedesktop.appearance `contrast`. Debian's portal
(bookworm's xdg-desktop-portal 1.16 and its GTK backend) has no `contrast` setting yet, so this
serves that part of the interface as the portal specifies it.

Usage: portal_settings.py CONTRAST
Prints READY once the name is owned; then each line `contrast N` on stdin sets the value and
emits SettingChanged, answered by a line `SET N`.
"""

import sys

from gi.repository import Gio, GLib

XML = """
<node>
  <interface name="org.freedesktop.portal.Settings">
    <method name="ReadAll">
      <arg type="as" name="namespaces" direction="in"/>
      <arg type="a{sa{sv}}" name="value" direction="out"/>
    </method>
    <method name="Read">
      <arg type="s" name="namespace" direction="in"/>
      <arg type="s" name="key" direction="in"/>
      <arg type="v" name="value" direction="out"/>
    </method>
    <method name="ReadOne">
      <arg type="s" name="namespace" direction="in"/>
      <arg type="s" name="key" direction="in"/>
      <arg type="v" name="value" direction="out"/>
    </method>
    <signal name="SettingChanged">
      <arg type="s" name="namespace"/>
      <arg type="s" name="key"/>
      <arg type="v" name="value"/>
    </signal>
    <property name="version" type="u" access="read"/>
  </interface>
</node>
"""
NAMESPACE = "org.freedesktop.appearance"
PATH = "/org/freedesktop/portal/desktop"
IFACE = "org.freedesktop.portal.Settings"

contrast = int(sys.argv[1])
loop = GLib.MainLoop()
connection = None


def on_call(conn, sender, path, iface, method, params, invocation):
    if method == "ReadAll":
        wanted = params.unpack()[0]
        values = {}
        if not wanted or NAMESPACE in wanted:
            values[NAMESPACE] = {"contrast": GLib.Variant("u", contrast)}
        invocation.return_value(GLib.Variant("(a{sa{sv}})", (values,)))
        return
    namespace, key = params.unpack()
    if namespace != NAMESPACE or key != "contrast":
        invocation.return_dbus_error(
            "org.freedesktop.portal.Error.NotFound", "Requested setting not found"
        )
        return
    value = GLib.Variant("u", contrast)
    if method == "Read":
        value = GLib.Variant("v", value)
    invocation.return_value(GLib.Variant("(v)", (value,)))


def on_property(conn, sender, path, iface, name):
    return GLib.Variant("u", 2)


def on_bus(conn, name):
    global connection
    connection = conn
    info = Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0]
    conn.register_object(PATH, info, on_call, on_property, None)


def on_name(conn, name):
    print("READY", flush=True)


def on_lost(conn, name):
    print("FAIL cannot own " + name, flush=True)
    loop.quit()


def on_stdin(channel, condition):
    global contrast
    line = channel.readline()
    if not line:
        loop.quit()
        return False
    words = line.split()
    if len(words) == 2 and words[0] == "contrast":
        contrast = int(words[1])
        connection.emit_signal(
            None,
            PATH,
            IFACE,
            "SettingChanged",
            GLib.Variant("(ssv)", (NAMESPACE, "contrast", GLib.Variant("u", contrast))),
        )
        print(f"SET {contrast}", flush=True)
    return True


Gio.bus_own_name(
    Gio.BusType.SESSION,
    "org.freedesktop.portal.Desktop",
    Gio.BusNameOwnerFlags.NONE,
    on_bus,
    on_name,
    on_lost,
)
GLib.io_add_watch(GLib.IOChannel.unix_new(sys.stdin.fileno()), GLib.IO_IN | GLib.IO_HUP, on_stdin)
loop.run()
