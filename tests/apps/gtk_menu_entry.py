#!/usr/bin/python3
"""A small GTK 3 app for the compositor's real-app tests: a menu bar whose "File" menu opens
as an xdg popup with a grab, and a text entry that pastes the clipboard (Ctrl+V). It prints,
one per line on stdout: where its widgets are (`widgets menu=X,Y,W,H entry=X,Y,W,H`, relative
to the window's geometry, once mapped), every menu item activated (`activated NAME`), and the
entry's text whenever it changes (`entry TEXT`)."""

import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def say(line):
    print(line, flush=True)


def rect(widget, window):
    alloc = widget.get_allocation()
    x, y = widget.translate_coordinates(window, 0, 0)
    return f"{x},{y},{alloc.width},{alloc.height}"


def main():
    window = Gtk.Window(title="pcp-gtk-test")
    # No client-side title bar or shadow: widget coordinates are window-geometry coordinates.
    window.set_decorated(False)
    window.set_default_size(420, 300)
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
    bar = Gtk.MenuBar()
    file_item = Gtk.MenuItem(label="File")
    menu = Gtk.Menu()
    for name in ("Open", "Save", "Close", "Quit"):
        item = Gtk.MenuItem(label=name)
        item.connect("activate", lambda _w, n=name: say(f"activated {n}"))
        menu.append(item)
    file_item.set_submenu(menu)
    bar.append(file_item)
    box.pack_start(bar, False, False, 0)
    entry = Gtk.Entry()
    entry.connect("changed", lambda e: say(f"entry {e.get_text()}"))
    box.pack_start(entry, False, False, 8)
    window.add(box)
    window.connect("destroy", Gtk.main_quit)

    def mapped(*_):
        def report():
            entry.grab_focus()
            say(f"widgets menu={rect(file_item, window)} entry={rect(entry, window)}")
            return False

        GLib.timeout_add(200, report)

    window.connect("map-event", mapped)
    window.show_all()
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
