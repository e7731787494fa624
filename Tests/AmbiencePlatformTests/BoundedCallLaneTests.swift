import AmbiencePlatform
import Dispatch
import Foundation
import Synchronization
import Testing

@testable import AmbienceTestSupport

/// The lane that SDL's device opens and closes go through: a slow call delays the next one, which still succeeds
/// (CI under load saw a close take over 2 s, and the next open refused); only a lane stuck past its patience refuses.
@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct BoundedCallLaneTests {
    @Test func aCallWithinItsDeadlineReturnsItsResult() {
        let lane = BoundedCallLane(name: "test-lane-quick")
        #expect(lane.run(seconds: 5) { 42 } == 42)
        #expect(!lane.isStuck)
    }

    @Test func aCallBehindASlowAbandonedCallWaitsForItAndSucceeds() {
        let lane = BoundedCallLane(name: "test-lane-slow", patience: 30)
        let gate = DiskGate()
        let late = Mutex<Int?>(nil)
        let slowCall: @Sendable () -> Int = {
            gate.pass()
            return 1
        }
        let first = lane.run(seconds: 0.05, slowCall, late: { value in late.withLock { $0 = value } })
        #expect(first == nil)
        // The slow call ends 200 ms into the next call's 5 s deadline.
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { gate.open() }
        #expect(lane.run(seconds: 5) { 2 } == 2)
        #expect(late.withLock { $0 } == 1)
        #expect(!lane.isStuck)
    }

    @Test func aLaneStuckPastItsPatienceRefusesAtOnceAndRecoversWhenTheCallEnds() {
        let lane = BoundedCallLane(name: "test-lane-stuck", patience: 0.2)
        let gate = DiskGate()
        #expect(lane.run(seconds: 0.05) { gate.pass() } == nil)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(lane.isStuck)
        let started = ContinuousClock.now
        #expect(lane.run(seconds: 5) { 3 } == nil)
        #expect(ContinuousClock.now - started < .seconds(1), "a stuck lane refuses at once")
        gate.open()
        // Once the stuck call ends, the lane takes calls again.
        var again: Int?
        for _ in 0..<100 where again == nil {
            again = lane.run(seconds: 1) { 4 }
            if again == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(again == 4)
        #expect(!lane.isStuck)
    }
}
