import AmbiencePlatform
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct MonotonicClockTests {
    /// `sleep(for:)` sleeps at least what it is given, and nothing for a negative or zero duration.
    @Test func sleepForADuration() {
        let start = monotonicNanoseconds()
        sleep(for: .milliseconds(5))
        #expect(monotonicNanoseconds() - start >= 5_000_000)
        let again = monotonicNanoseconds()
        sleep(for: .seconds(-3))
        sleep(for: .zero)
        #expect(monotonicNanoseconds() - again < 1_000_000_000)
    }
}
