import AmbiencePlatform
import Foundation
import Testing

@testable import AmbienceTestSupport

/// `ProcessLocale` and `MessageCatalog` on the real glibc and the demo game's committed German catalog
/// (Assets/locale/de/LC_MESSAGES/gravity-wave.mo).
@Suite(.serialized, .offTheCooperativePool, .timeLimit(.minutes(5))) struct ProcessLocaleTests {
    static let childVariable = "AMBIENCE_TEST_LOCALE_CHILD"
    static var isChild: Bool { ProcessEnvironment.value(childVariable) == "1" }

    /// The locale is the process's, read by every thread without a lock: it is set in a child of its own, whose
    /// messages are C.UTF-8 (installed with every glibc) and whose language is German through `LANGUAGE`.
    @Test(.enabled(if: !ProcessLocaleTests.isChild, "the parent of the test below"))
    func translateInAChild() throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let run = try ChildProcess.run(
            [binary, "--testing-library", "swift-testing", "--filter", "ProcessLocaleTests/translateInGerman\\("],
            environment: childEnvironment([Self.childVariable: "1", "LANGUAGE": "de"]), timeout: 60)
        let output = String(decoding: run.stdout + run.stderr, as: UTF8.self)
        #expect(!run.killedBySignal && !run.timedOut && run.status == 0, "\(output)")
        #expect(output.contains("translateInGerman() passed"), "the child ran the test: \(output)")
    }

    @Test(.enabled(if: ProcessLocaleTests.isChild, "the child of the test above: runs only there"))
    func translateInGerman() {
        let catalog = MessageCatalog(domain: "gravity-wave")
        #expect(catalog.bind(catalogs: BuildProducts.assets + "/locale"))
        // In the "C" locale (where a program starts) gettext answers in English whatever LANGUAGE says.
        #expect(ProcessLocale.set(.all, to: "C"))
        #expect(catalog.translation(of: "Add Music") == "Add Music")
        #expect(ProcessLocale.set(.all, to: ""))  // LC_ALL=C.UTF-8 from the environment
        #expect(catalog.translation(of: "Add Music") == "Musik hinzufügen")
        // A locale that is not installed is refused and leaves the locale as it was.
        #expect(!ProcessLocale.set(.messages, to: "xx_NOWHERE.UTF-8"))
        #expect(!ProcessLocale.set(.all, to: "C.UTF-8\0de_DE"))
        #expect(catalog.translation(of: "Add Music") == "Musik hinzufügen")
        // What no catalog has, or what C would cut at a NUL, comes back as it is.
        #expect(catalog.translation(of: "Not a message of the game") == "Not a message of the game")
        #expect(catalog.translation(of: "Add Music\0 and more") == "Add Music\0 and more")
        #expect(MessageCatalog(domain: "ambience-no-such-domain").translation(of: "Add Music") == "Add Music")
    }

    @Test func namesCWouldMisreadAreRefused() {
        #expect(!MessageCatalog(domain: "").bind(catalogs: "/tmp"))
        #expect(!MessageCatalog(domain: "gravity\0wave").bind(catalogs: "/tmp"))
        #expect(!MessageCatalog(domain: "gravity-wave-test").bind(catalogs: "/tmp\0/x"))
        #expect(MessageCatalog(domain: "gravity\0wave").translation(of: "Add Music") == "Add Music")
    }
}
