import Foundation
import Glibc

/// How long a test waits for something to happen that another process (mpv, VLC, playerctl, the sound server, the
/// bus daemon, a program the test started) or another thread must do: 30 s. The suite passes while other jobs load
/// both cores (#32: 5 runs of 5 under load), and there any of those can lose the processor for seconds. A wait ends
/// as soon as its condition holds, so the width costs nothing when things work; a wait that must *not* end (nothing
/// happens) is a different thing, and says its own, short, time.
let waitBound: Double = 30

/// Polls `condition` every 20 ms until it holds or `seconds` pass: how a test waits for something to happen
/// instead of sleeping for a fixed time. A bound for a wait, not a measurement: by default `waitBound`, and where the
/// delay itself is under test, check the time it took separately.
func eventually(within seconds: Double = waitBound, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while monotonicSeconds() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}
