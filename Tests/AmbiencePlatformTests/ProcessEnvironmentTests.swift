import AmbiencePlatform
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.serialized, .offTheCooperativePool, .timeLimit(.minutes(5))) struct ProcessEnvironmentTests {
    @Test func setReadAndUnset() throws {
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
