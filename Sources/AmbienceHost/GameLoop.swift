import AmbiencePlatform

/// A fixed-time-step accumulator: the game updates in steps of exactly `step` seconds, however long frames take,
/// and draws with `alpha`, the fraction of a step since the last update, to interpolate between two states.
///
/// Pure: a game with its own loop can use it without the rest of the host.
public struct FixedTimestep: Sendable {
    /// Seconds per update.
    public let step: Double
    /// Updates run in one frame at most; time beyond that is dropped, so a long stall does not snowball.
    public var maxStepsPerFrame: Int
    public private(set) var accumulator: Double = 0

    /// Rates are clamped to `HostConfiguration.updateRates`; a rate that is not finite is 60.
    public init(rate: Double = 60, maxStepsPerFrame: Int = 5) {
        let limits = HostConfiguration.updateRates
        step = 1 / (rate.isFinite ? min(max(rate, limits.lowerBound), limits.upperBound) : 60)
        self.maxStepsPerFrame = maxStepsPerFrame
    }

    /// Adds a frame's elapsed seconds; returns how many updates to run now.
    public mutating func advance(by elapsed: Double) -> Int {
        if elapsed.isFinite { accumulator += max(elapsed, 0) }
        // A whisker of tolerance, so that a frame of exactly one step is one update despite rounding.
        var steps = ((accumulator + step * 1e-6) / step).saturated(Int.self, rounding: .down)
        if steps > maxStepsPerFrame {
            steps = maxStepsPerFrame
            accumulator = 0
        } else {
            accumulator = max(accumulator - Double(steps) * step, 0)
        }
        return steps
    }

    /// How far (0…1) the present lies between the last update and the next.
    public var alpha: Double { min(accumulator / step, 1) }
}

/// How long something took, frame after frame: count, average and worst.
public struct FrameTiming: Sendable, Equatable {
    public private(set) var count = 0
    public private(set) var totalNanoseconds: Int64 = 0
    public private(set) var maxNanoseconds: Int64 = 0

    public init() {}

    public mutating func record(nanoseconds: Int64) {
        count += 1
        totalNanoseconds += nanoseconds
        maxNanoseconds = max(maxNanoseconds, nanoseconds)
    }

    public mutating func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        record(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    public var averageMilliseconds: Double { count == 0 ? 0 : Double(totalNanoseconds) / Double(count) / 1e6 }
    public var maxMilliseconds: Double { Double(maxNanoseconds) / 1e6 }
}

/// Turns window and application events into the session's background and foreground.
///
/// The game is in the background while any reason holds: the window is minimized or hidden, the system said the
/// app entered the background, or (only when `focusLossIsBackground`) the window lost the keyboard focus.
public struct BackgroundTracker: Sendable {
    public enum Reason: Sendable, Hashable { case minimized, hidden, appBackground, unfocused }
    public enum Transition: Sendable, Equatable { case enterBackground, enterForeground }

    public var focusLossIsBackground: Bool
    public private(set) var reasons: Set<Reason> = []
    public var isInBackground: Bool { !reasons.isEmpty }

    public init(focusLossIsBackground: Bool = false) { self.focusLossIsBackground = focusLossIsBackground }

    /// Feeds an event; returns the transition it causes, if any.
    public mutating func handle(_ event: HostEvent) -> Transition? {
        let before = isInBackground
        switch event {
        case .window(.minimized): reasons.insert(.minimized)
        case .window(.hidden): reasons.insert(.hidden)
        case .window(.restored), .window(.maximized):
            reasons.remove(.minimized)
            reasons.remove(.hidden)
        case .window(.shown): reasons.remove(.hidden)
        case .window(.focusLost): if focusLossIsBackground { reasons.insert(.unfocused) }
        case .window(.focusGained): reasons.remove(.unfocused)
        case .app(.willEnterBackground), .app(.didEnterBackground): reasons.insert(.appBackground)
        case .app(.willEnterForeground), .app(.didEnterForeground): reasons.remove(.appBackground)
        default: break
        }
        switch (before, isInBackground) {
        case (false, true): return .enterBackground
        case (true, false): return .enterForeground
        default: return nil
        }
    }
}

/// Which SDL video drivers to try, in order: the one the caller names, else what `SDL_VIDEODRIVER` says, else x11
/// when `DISPLAY` is set, else wayland when `WAYLAND_DISPLAY` is, else SDL's offscreen driver, then dummy.
public func videoDriverCandidates(explicit: String? = nil, environment: [String: String]) -> [String] {
    if let explicit, !explicit.isEmpty { return explicit == "dummy" ? ["dummy"] : [explicit, "dummy"] }
    if let chosen = environment["SDL_VIDEODRIVER"], !chosen.isEmpty { return [chosen] }
    if let display = environment["DISPLAY"], !display.isEmpty { return ["x11"] }
    if let wayland = environment["WAYLAND_DISPLAY"], !wayland.isEmpty { return ["wayland", "x11"] }
    return ["offscreen", "dummy"]
}

/// Whether a window would be seen: a display is set, or `SDL_VIDEODRIVER` names a real driver.
public func hasDisplay(environment: [String: String]) -> Bool {
    if let chosen = environment["SDL_VIDEODRIVER"], !chosen.isEmpty {
        return chosen != "offscreen" && chosen != "dummy"
    }
    return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
}
