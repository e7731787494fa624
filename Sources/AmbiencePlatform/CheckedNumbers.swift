/// A number the engine refuses: not finite, or outside what it is going into.
///
/// Every count, size, time or gain that comes from a file, a caller or arithmetic on them passes through one of the
/// helpers below before it reaches C, an allocation or an index. None of them can trap. They are `@inlinable`: every
/// API number passes one, from the modules above.
public struct InvalidNumber: Error, Equatable, Sendable, CustomStringConvertible {
    /// What the number is ("gain", "frames in the fmt chunk").
    public let what: String
    /// The number as given.
    public let value: String
    /// What was expected ("a finite number", "at most 2147483647").
    public let expected: String

    @usableFromInline package init(_ what: String, value: String, expected: String) {
        self.what = what
        self.value = value
        self.expected = expected
    }

    public var description: String { "\(what) is \(value), not \(expected)" }
}

// MARK: - Integers toward C

extension BinaryInteger {
    /// The value as `I` exactly, or a refusal that names it: the way a size or count reaches `Int32`, `ALsizei`,
    /// `UInt32` and friends.
    @inlinable package func exactly<I: FixedWidthInteger>(_: I.Type, _ what: @autoclosure () -> String)
        throws(InvalidNumber) -> I
    {
        guard let converted = I(exactly: self) else {
            throw InvalidNumber(what(), value: "\(self)", expected: "within \(I.min)...\(I.max)")
        }
        return converted
    }

    /// The value as `I` when it is in `range`, else a refusal.
    @inlinable package func checked<I: FixedWidthInteger>(
        _: I.Type, in range: ClosedRange<I>,
        _ what: @autoclosure () -> String
    ) throws(InvalidNumber) -> I {
        guard let converted = I(exactly: self), range.contains(converted) else {
            throw InvalidNumber(what(), value: "\(self)", expected: "within \(range.lowerBound)...\(range.upperBound)")
        }
        return converted
    }
}

// MARK: - Floating point from callers and files

extension BinaryFloatingPoint {
    /// The value when it is finite, else a refusal that names it. NaN and infinities never reach the mixer.
    @inlinable package func finite(_ what: @autoclosure () -> String) throws(InvalidNumber) -> Self {
        guard isFinite else { throw InvalidNumber(what(), value: "\(Double(self))", expected: "a finite number") }
        return self
    }

    /// The value clamped into `range` when it is finite, else a refusal. Out-of-range values are the caller's
    /// choice taken as far as it goes (a gain of 40 is loud, not an error); NaN and infinities say nothing.
    @inlinable package func clamped(to range: ClosedRange<Self>, _ what: @autoclosure () -> String)
        throws(InvalidNumber) -> Self
    {
        min(max(try finite(what()), range.lowerBound), range.upperBound)
    }

    /// The value rounded by `rule` into `I`, or a refusal when it is not finite or does not fit. Never traps, unlike
    /// `Int(double)` or `Int64(double)`.
    @inlinable package func integer<I: FixedWidthInteger>(
        _: I.Type, rounding rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero,
        _ what: @autoclosure () -> String
    ) throws(InvalidNumber) -> I {
        // I(exactly:) of an integral value is nil exactly when it is out of range (or NaN, or infinite).
        guard let converted = I(exactly: self.rounded(rule)) else {
            throw InvalidNumber(what(), value: "\(Double(self))", expected: "a number within \(I.min)...\(I.max)")
        }
        return converted
    }

    /// The value rounded by `rule` into `I`, saturating at `I`'s ends; NaN becomes zero. For numbers the engine
    /// produced itself and only needs to bound (a progress bar, a statistic), never for a caller's input.
    @inlinable package func saturated<I: FixedWidthInteger>(
        _: I.Type, rounding rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero
    ) -> I {
        let rounded = self.rounded(rule)
        if let converted = I(exactly: rounded) { return converted }
        return rounded.isNaN ? 0 : rounded < 0 ? I.min : I.max
    }
}
