import Glibc

// The libFuzzer entry point, built by Tests/Fuzz/run.sh with -sanitize=fuzzer,address over the whole engine.
// One binary serves every target; AMBIENCE_FUZZ_TARGET picks which (FuzzTarget in
// Tests/AmbienceIntegrationSupport/FuzzDrivers.swift, which the test suite uses to replay Tests/Fuzz/regressions/).

private let target: FuzzTarget = {
    let name = getenv("AMBIENCE_FUZZ_TARGET").map { String(cString: $0) } ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError("AMBIENCE_FUZZ_TARGET is '\(name)', not one of \(FuzzTarget.allCases.map(\.rawValue))")
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let problems = target.run(Array(UnsafeBufferPointer(start: data, count: size)))
    // A broken invariant is a finding, as a crash is: abort so libFuzzer keeps the input.
    if !problems.isEmpty { fatalError("fuzz \(target.rawValue): " + problems.joined(separator: "; ")) }
    return 0
}
