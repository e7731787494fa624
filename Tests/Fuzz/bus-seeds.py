#!/usr/bin/python3
"""Writes the bus fuzz target's seeds: D-Bus messages in wire format, as players, screensavers, logind and callers
of the engine's MPRIS server send them, and a few that a hostile peer would. Needs Debian's python3-gi.
    /usr/bin/python3 Tests/Fuzz/bus-seeds.py Tests/Fuzz/regressions/bus"""
import os
import sys

from gi.repository import Gio, GLib

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
PLAYER = "org.mpris.MediaPlayer2.Player"
PATH = "/org/mpris/MediaPlayer2"
V = GLib.Variant


def write(name, message, sender=":1.5"):
    message.set_sender(sender)
    message.set_serial(7)
    with open(os.path.join(out, name), "wb") as f:
        f.write(message.to_blob(Gio.DBusCapabilityFlags.NONE))


def signal(path, interface, member, body):
    m = Gio.DBusMessage.new_signal(path, interface, member)
    m.set_body(body)
    return m


def call(interface, member, body=None):
    m = Gio.DBusMessage.new_method_call("org.mpris.MediaPlayer2.ambience.fuzz", PATH, interface, member)
    if body is not None:
        m.set_body(body)
    return m


metadata = {"mpris:trackid": V("o", "/t/1"), "xesam:title": V("s", "Tëst\x1b]0;x\x07"),
            "xesam:artist": V("as", ["A", "B"]), "mpris:length": V("x", 2**63 - 1), "mpris:artUrl": V("s", "file:///a.png")}
write("properties-changed", signal(PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged", V(
    "(sa{sv}as)", (PLAYER, {"PlaybackStatus": V("s", "Playing"), "Metadata": V("a{sv}", metadata),
                            "Volume": V("d", float("nan")), "Position": V("d", float("inf"))}, []))))
write("properties-invalidated", signal(PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged", V(
    "(sa{sv}as)", ("org.mpris.MediaPlayer2", {"Identity": V("s", "x")}, ["Metadata"]))))
write("seeked", signal(PATH, PLAYER, "Seeked", V("(x)", (-2**63,))))
write("seeked-double", signal(PATH, PLAYER, "Seeked", V("(d)", (float("nan"),))))
write("name-owner-changed", signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", V(
    "(sss)", ("org.mpris.MediaPlayer2.fuzz", ":1.5", ":1.6"))), sender="org.freedesktop.DBus")
write("name-lost", signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", V(
    "(sss)", ("org.mpris.MediaPlayer2.fuzz", ":1.5", ""))), sender="org.freedesktop.DBus")
write("active-changed", signal("/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver", "ActiveChanged",
                               V("(b)", (True,))))
write("get", call("org.freedesktop.DBus.Properties", "Get", V("(ss)", (PLAYER, "Position"))))
write("get-all", call("org.freedesktop.DBus.Properties", "GetAll", V("(s)", (PLAYER,))))
write("set-volume", call("org.freedesktop.DBus.Properties", "Set", V("(ssv)", (PLAYER, "Volume", V("d", 1e308)))))
write("seek", call(PLAYER, "Seek", V("(x)", (2**63 - 1,))))
write("set-position", call(PLAYER, "SetPosition", V("(ox)", ("/org/ambience/track/1", -1))))
write("open-uri", call(PLAYER, "OpenUri", V("(s)", ("file:///dev/zero",))))
write("play-pause", call(PLAYER, "PlayPause"))
write("introspect", call("org.freedesktop.DBus.Introspectable", "Introspect"))
write("no-interface", Gio.DBusMessage.new_method_call("x.y", PATH, None, "Seek"))
# Over the engine's limits: more values than it decodes, and variants nested past its depth.
write("many-values", call(PLAYER, "Seek", V("(ay)", (bytes(17000),))))
deep = V("i", 1)
for _ in range(40):
    deep = V("v", deep)
write("deep", call("org.freedesktop.DBus.Properties", "Set", V("(ssv)", (PLAYER, "Volume", deep))))
