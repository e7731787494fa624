/// Reverb presets, ported from OpenAL Soft's `efx-presets.h` (standard-reverb fields).
public enum ReverbPreset: String, Sendable, CaseIterable {
    /// A small room, a concert hall, a cave, under water and an aircraft hangar: EFX's `ROOM`, `CONCERTHALL`, `CAVE`,
    /// `UNDERWATER` and `HANGAR`.
    case room, hall, cave, underwater, hangar

    /// The preset's settings, to adjust and pass to `AudioEngine.setReverb(_:on:)`.
    public var parameters: ReverbParameters {
        switch self {
        case .room:
            ReverbParameters(
                density: 0.4287, diffusion: 1, gain: 0.3162, gainHF: 0.5929, decayTime: 0.4, decayHFRatio: 0.83,
                reflectionsGain: 0.1503, reflectionsDelay: 0.002, lateReverbGain: 1.0629, lateReverbDelay: 0.003)
        case .hall:
            ReverbParameters(
                density: 1, diffusion: 1, gain: 0.3162, gainHF: 0.5623, decayTime: 3.92, decayHFRatio: 0.7,
                reflectionsGain: 0.2427, reflectionsDelay: 0.02, lateReverbGain: 0.9977, lateReverbDelay: 0.029)
        case .cave:
            ReverbParameters(
                density: 1, diffusion: 1, gain: 0.3162, gainHF: 1, decayTime: 2.91, decayHFRatio: 1.3,
                reflectionsGain: 0.5, reflectionsDelay: 0.015, lateReverbGain: 0.7063, lateReverbDelay: 0.022,
                decayHFLimit: false)
        case .underwater:
            ReverbParameters(
                density: 0.3645, diffusion: 1, gain: 0.3162, gainHF: 0.01, decayTime: 1.49, decayHFRatio: 0.1,
                reflectionsGain: 0.5963, reflectionsDelay: 0.007, lateReverbGain: 7.0795, lateReverbDelay: 0.011)
        case .hangar:
            ReverbParameters(
                density: 1, diffusion: 1, gain: 0.3162, gainHF: 0.3162, decayTime: 10.05, decayHFRatio: 0.23,
                reflectionsGain: 0.5, reflectionsDelay: 0.02, lateReverbGain: 1.256, lateReverbDelay: 0.03)
        }
    }
}

/// A sphere of the world with its own reverb: world voices inside it use it, whatever their bus.
public struct ReverbZone: Sendable, Equatable {
    /// The middle of the sphere, in world coordinates.
    public var center: Vector3
    /// The sphere's radius, in world units.
    public var radius: Float
    /// The reverb inside it.
    public var reverb: ReverbParameters

    /// A zone, checked by `ReverbZone.validated()` when it is set.
    public init(center: Vector3, radius: Float, reverb: ReverbParameters) {
        self.center = center
        self.radius = radius
        self.reverb = reverb
    }

    func contains(_ point: Vector3) -> Bool {
        let dx = point.x - center.x, dy = point.y - center.y, dz = point.z - center.z
        return dx * dx + dy * dy + dz * dz <= radius * radius
    }
}

/// What this machine's OpenAL Soft and optional system libraries offer. A missing extension or library turns its
/// feature off; the engine still runs.
public struct AudioCapabilities: Sendable, Equatable {
    /// OpenAL Soft's name and version ("OpenAL Soft 1.19.1").
    public var renderer: String
    /// Reverb and low-pass filters (ALC_EXT_EFX).
    public var effects: Bool
    /// Head-related transfer functions (ALC_SOFT_HRTF).
    public var hrtf: Bool
    /// Whether HRTF rendering is on now (`AudioEngine.setHRTF(_:)`).
    public var hrtfEnabled: Bool
    /// Real sources the mixer got.
    public var realVoices: Int
    /// Every ALC and AL extension the device reports.
    public var extensions: [String]
    /// Features the engine would use but cannot, with the extension or library each needs (and, for a library, why
    /// it could not be loaded).
    public var missing: [String]
    /// The optional system libraries the engine opens at run time (libpulse, libdbus-1, SDL2_image), each with
    /// whether it could be.
    public var systemLibraries: [SystemLibrary] = []
}

extension AudioCapabilities {
    /// A system library the engine opens at run time rather than links, so that a game starts without it.
    public struct SystemLibrary: Sendable, Equatable {
        /// The name it is opened by (its soname, such as `libpulse.so.0`).
        public var name: String
        /// What the engine does with it, and so does without when it is missing.
        public var feature: String
        /// Why it could not be used (the dynamic loader's message, or the function it lacks); nil when it loaded.
        public var unavailableReason: String?

        /// One library's line of the report; the engine's `systemLibraryReport` asks each wrapper for it.
        package init(name: String, feature: String, unavailableReason: String?) {
            self.name = name
            self.feature = feature
            self.unavailableReason = unavailableReason
        }

        /// True when the library loaded with every function the engine calls.
        public var isAvailable: Bool { unavailableReason == nil }
    }
}

/// Reverb settings in the units of the EFX standard reverb.
public struct ReverbParameters: Sendable, Equatable {
    /// Echo density and diffusion (0…1), the overall gain and its gain at high frequencies (0…1).
    public var density: Float, diffusion: Float, gain: Float, gainHF: Float
    /// How long the tail lasts (seconds, 0.1…20) and how much shorter it is at high frequencies (a ratio, 0.1…2).
    public var decayTime: Float, decayHFRatio: Float
    /// The early reflections' gain (0…3.16) and delay (seconds, 0…0.3).
    public var reflectionsGain: Float, reflectionsDelay: Float
    /// The late reverberation's gain (0…10) and delay after the reflections (seconds, 0…0.1).
    public var lateReverbGain: Float, lateReverbDelay: Float
    /// High-frequency absorption by the air (0.892…1) and how fast the reverb falls off with distance (0…10).
    public var airAbsorptionGainHF: Float, roomRolloffFactor: Float
    /// Whether the high-frequency decay is held to what the air absorption allows.
    public var decayHFLimit: Bool

    /// Reverb settings; the last three default to EFX's standard values. `ReverbParameters.validated()` refuses NaN
    /// and infinities when they are set; OpenAL clamps finite values into the ranges above.
    public init(
        density: Float, diffusion: Float, gain: Float, gainHF: Float, decayTime: Float, decayHFRatio: Float,
        reflectionsGain: Float, reflectionsDelay: Float, lateReverbGain: Float, lateReverbDelay: Float,
        airAbsorptionGainHF: Float = 0.9943, roomRolloffFactor: Float = 0, decayHFLimit: Bool = true
    ) {
        self.density = density; self.diffusion = diffusion; self.gain = gain; self.gainHF = gainHF
        self.decayTime = decayTime; self.decayHFRatio = decayHFRatio
        self.reflectionsGain = reflectionsGain; self.reflectionsDelay = reflectionsDelay
        self.lateReverbGain = lateReverbGain; self.lateReverbDelay = lateReverbDelay
        self.airAbsorptionGainHF = airAbsorptionGainHF; self.roomRolloffFactor = roomRolloffFactor
        self.decayHFLimit = decayHFLimit
    }
}
