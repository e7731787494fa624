internal import CAmbienceVersion

/// A release of Ambience: `major.minor.patch`, as semantic versioning counts them. The C library's soname carries
/// the major number (`libambience.so.0`), so it changes exactly when the C ABI breaks.
public struct AmbienceVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Changes when the API or the C ABI breaks (0 while the API is young: any minor release may break it).
    public let major: Int
    /// Changes when a release adds to the API.
    public let minor: Int
    /// Changes when a release only fixes things.
    public let patch: Int

    /// A version from its three numbers.
    public init(major: Int, minor: Int, patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// `"0.2.0"`.
    public var description: String { "\(major).\(minor).\(patch)" }

    public static func < (a: AmbienceVersion, b: AmbienceVersion) -> Bool {
        (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
    }
}

/// The version of this build of the engine. It comes from `ambience_version.h`'s `AMBIENCE_VERSION_MAJOR`, `_MINOR` and
/// `_PATCH`, the one place a release changes it: the C library's `ambience_version()`, the `ambience --version`
/// command and the installed `ambience.pc` all report the same numbers.
public let version = AmbienceVersion(
    major: Int(AMBIENCE_VERSION_MAJOR), minor: Int(AMBIENCE_VERSION_MINOR),
    patch: Int(AMBIENCE_VERSION_PATCH))
