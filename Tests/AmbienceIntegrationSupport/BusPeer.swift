@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceDesktop
@testable import AmbienceTestSupport

/// A connection that plays another program on a test's bus (a screensaver, logind). It waits for the bus as any wait
/// on another process does, `waitBound`, by default in each call too (`requestName(_:timeout:)` is given it): the
/// product's 250 ms are for the game thread, and a loaded machine can keep dbus-daemon from answering that fast.
func busPeer(_ address: String) throws -> DBusConnection {
    try DBusConnection(address: address, timeout: .seconds(waitBound))
}

/// How long a test's own bus peer waits for the bus in one call.
let busPeerTimeout = Duration.seconds(waitBound)
