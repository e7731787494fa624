import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.serialized, .offTheCooperativePool, .timeLimit(.minutes(5))) struct ProcessEnvironmentTests {
    static let childVariable = "AMBIENCE_TEST_ENVIRONMENT_CHILD"
    static var isChild: Bool { ProcessEnvironment.value(childVariable) == "1" }

    /// `set` is not safe while other threads read the environment, as the suites beside this one do (a spawn's PATH,
    /// OpenAL's and SDL's variables): the setting is done in a child of its own.
    @Test(.enabled(if: !ProcessEnvironmentTests.isChild, "the parent of the test below"))
    func setReadAndUnsetInAChild() throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let run = try ChildProcess.run(
            [binary, "--testing-library", "swift-testing", "--filter", "ProcessEnvironmentTests/setReadAndUnset\\("],
            environment: childEnvironment([Self.childVariable: "1"]), timeout: 60)
        let output = String(decoding: run.stdout + run.stderr, as: UTF8.self)
        #expect(!run.killedBySignal && !run.timedOut && run.status == 0, "\(output)")
        #expect(output.contains("setReadAndUnset() passed"), "the child ran the test: \(output)")
    }

    @Test(.enabled(if: ProcessEnvironmentTests.isChild, "the child of the test above: runs only there"))
    func setReadAndUnset() throws {
        let name = "AMBIENCE_PLATFORM_TEST_\(ProcessIdentity.current)"
        #expect(ProcessEnvironment.value(name) == nil)
        try ProcessEnvironment.set(name, to: "one two")
        #expect(ProcessEnvironment.value(name) == "one two")
        try ProcessEnvironment.set(name, to: "")
        #expect(ProcessEnvironment.value(name) == "")
        try ProcessEnvironment.set(name, to: nil)
        #expect(ProcessEnvironment.value(name) == nil)
        try ProcessEnvironment.set(name, to: nil)  // unsetting what is not set is no error
    }

    @Test func namesAndValuesCWouldMisreadAreRefused() {
        #expect(throws: Errno(EINVAL)) { try ProcessEnvironment.set("", to: "x") }
        #expect(throws: Errno(EINVAL)) { try ProcessEnvironment.set("A=B", to: "x") }
        #expect(throws: Errno(EINVAL)) { try ProcessEnvironment.set("A\0B", to: "x") }
        #expect(throws: Errno(EINVAL)) { try ProcessEnvironment.set("AMBIENCE_PLATFORM_TEST_NUL", to: "x\0y") }
        #expect(ProcessEnvironment.value("AMBIENCE_PLATFORM_TEST_NUL") == nil)
    }
}
