import Foundation
import Glibc

/// Polls `condition` every 20 ms until it holds or `seconds` pass: how a test waits for something to happen
/// instead of sleeping for a fixed time. A bound for a wait, not a measurement: make it generous (the machine may be
/// busy building), and where the delay itself is under test, check the time it took separately.
func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while monotonicSeconds() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}
