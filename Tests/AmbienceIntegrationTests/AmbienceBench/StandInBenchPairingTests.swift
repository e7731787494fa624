import Testing

@testable import AmbienceBench

/// `bench --sdl-mixer-stand-in`'s paired CPU ratios pair the runs of one round, whatever failed: no child runs here,
/// the report is filled in by hand.
@Suite struct StandInBenchPairingTests {
    func report(standIn: [Double?], sdlMixer: [Double?]) -> StandInBenchReport {
        var report = StandInBenchReport(options: StandInBenchOptions(standInFolder: "/x", standInLibrary: "/x/lib.so"))
        report.systems[report.systems.firstIndex { $0.library == .standIn }!].cpuPerAudioSecond = standIn
        report.systems[report.systems.firstIndex { $0.library == .sdlMixer }!].cpuPerAudioSecond = sdlMixer
        return report
    }

    @Test func aFailedRunInTheMiddleShiftsNoLaterPair() throws {
        // Round 2's stand-in run failed. Paired by round: 2/1, 12/10 -> 2 and 1.2, median 1.6. Zipped by position
        // after dropping the failure (the old lists), 12 met round 2's 100: 2 and 0.12, median 1.06.
        let report = report(standIn: [2, nil, 12], sdlMixer: [1, 100, 10])
        let ratio = try #require(report.pairedCPURatio(.standIn, over: .sdlMixer))
        #expect(abs(ratio - 1.6) < 1e-12, "\(ratio)")
        let inverse = try #require(report.pairedCPURatio(.sdlMixer, over: .standIn))
        #expect(abs(inverse - (0.5 + 10.0 / 12) / 2) < 1e-12, "\(inverse)")
        #expect(report.system(.standIn).medianCPU == 7, "the medians skip the failed run")
    }

    @Test func noPairWithoutARoundWhereBothRan() {
        #expect(report(standIn: [nil, 3], sdlMixer: [1, nil]).pairedCPURatio(.standIn, over: .sdlMixer) == nil)
        #expect(report(standIn: [1, 3], sdlMixer: [0, nil]).pairedCPURatio(.standIn, over: .sdlMixer) == nil)
        #expect(report(standIn: [], sdlMixer: []).pairedCPURatio(.standIn, over: .sdlMixer) == nil)
    }
}
