import AmbiencePlatform
import CDBus
import CPulse
import Foundation
import Glibc
import Testing

@testable import Ambience
@testable import AmbienceAudioTestSupport
@testable import AmbienceCore
@testable import AmbienceDecoding
@testable import AmbienceDesktop
@testable import AmbienceIntegrationSupport
@testable import AmbienceLibrary
@testable import AmbienceOutput
@testable import AmbienceTestSupport

/// The wrappers' own fallback, with a library that really cannot be loaded (another soname for the same table):
/// connecting throws `libraryUnavailable` with the loader's reason, which the route monitor and the desktop link
/// take as they take a missing server or bus.
@Suite(.offTheCooperativePool) struct MissingLibraryTests {
    static let pulseNames = String(cString: ambience_pulse_function_names())
    static let dbusNames = String(cString: ambience_dbus_function_names())

    @Test func withoutLibpulseThereIsNoMonitor() {
        let missing = OptionalLibrary<LibPulse>(
            name: "libpulse-missing.so.0", feature: "route detail", names: Self.pulseNames)
        #expect(missing.failure?.reason.contains("cannot open shared object file") == true)
        #expect {
            _ = try PulseAudioMonitor(appName: "ambience-test", library: missing)
        } throws: { error in
            guard case .libraryUnavailable(let detail) = error as? DesktopError else { return false }
            return detail.contains("libpulse-missing.so.0 could not be loaded (")
        }
    }

    @Test func withoutLibdbusThereIsNoConnection() {
        let missing = OptionalLibrary<LibDBus>(name: "libdbus-missing.so.3", feature: "desktop", names: Self.dbusNames)
        #expect {
            _ = try DBusConnection(
                address: ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "unix:path=/nonexistent",
                library: missing)
        } throws: { error in
            guard case .libraryUnavailable(let detail) = error as? DesktopError else { return false }
            return detail.contains("libdbus-missing.so.3 could not be loaded (")
        }
    }

    /// A library that opens but lacks a function the engine calls counts as unavailable, naming the function.
    @Test func aLibraryWithoutOneOfTheFunctionsIsUnavailable() {
        let pulse = OptionalLibrary<LibPulse>(name: "libm.so.6", feature: "route detail", names: Self.pulseNames)
        #expect(pulse.failure?.function == "pa_context_connect")
        #expect(pulse.failure?.description.hasPrefix("libm.so.6 has no pa_context_connect (") == true)
        let dbus = OptionalLibrary<LibDBus>(name: "libm.so.6", feature: "desktop", names: Self.dbusNames)
        #expect {
            _ = try DBusConnection(address: "unix:path=/nonexistent", library: dbus)
        } throws: { error in
            guard case .libraryUnavailable(let detail) = error as? DesktopError else { return false }
            return detail.contains("has no dbus_connection_add_filter")
        }
    }
}
