import Ambience
import AmbiencePlatform

/// The game's sound effects through the engine: one-shots placed in 3D by screen position, the ship's engine as a
/// looping voice that follows the thrust, the interface on the `ui` bus, and (for measuring) a crowd of quiet
/// ambient voices. Counts every sound it starts.
///
/// Each kind of effect has its own bus under `sfx` (the clicks use `ui`), so a mix can set them apart, and a test
/// can listen to one kind alone.
final class GameAudio {
    let engine: AudioEngine
    private let sounds: [SoundKind: Sound]
    /// The bus each kind plays through.
    let buses: [SoundKind: Bus]
    private var thrustVoice = Voice.none
    private var ambientVoices: [Voice] = []
    private let ambientBus: Bus
    private var random = GameRandom(seed: 0xA1B2)
    /// Sounds started, by kind.
    private(set) var counts: [SoundKind: Int] = [:]
    /// One-shots started, with the host frame they started in and the game time that frame began at (their audio
    /// starts with that frame's block).
    private(set) var log: [(frame: Int, time: Double, kind: SoundKind)] = []
    /// The host frame now and the game time it began at, set by the game between frames.
    var frame = 0
    var time = 0.0

    /// How much louder than the game's other sounds an explosion is, in dB.
    static let explosionLoudness: Float = 24
    /// The effects' HDR window: 40 dB wide, resting at 0 (where every other sound stands), rising in 30 ms, and
    /// falling back in 1.5 s once an explosion ends, so the quiet world returns gradually.
    static let window = HDRSettings(width: 40, threshold: 0, attack: 0.03, release: 1.5)

    /// World units across the screen: x runs -5…5 from left to right, y -3…3 from bottom to top, 3 units in front.
    static let halfWidth: Float = 5
    static let halfHeight: Float = 3
    static let depth: Float = 3

    init(engine: AudioEngine, assets: String) throws(EngineError) {
        self.engine = engine
        var loaded: [SoundKind: Sound] = [:]
        let files: [(SoundKind, String)] = [
            (.laser, "laser"), (.pickup, "pickup"), (.explosion, "explosion"),
            (.appSound, "pickup"), (.uiClick, "ui-click"), (.thrust, "thrust-loop")
        ]
        for (kind, name) in files { loaded[kind] = try engine.load("\(assets)/SFX/\(name).wav") }
        // HDR (docs/HDR.md): an explosion is louder in the world than anything else the game plays, so its
        // window pushes the rest of the effects down while it sounds, and culls the quietest (the idle thrust, the
        // ambient crowd). Every other sound keeps the default loudness, 0, so the calm mix is the one it was.
        loaded[.explosion]?.loudness = Self.explosionLoudness
        sounds = loaded
        engine.sfx.hdr = Self.window
        var buses: [SoundKind: Bus] = [.uiClick: engine.ui]
        for kind in SoundKind.allCases where kind != .uiClick {
            buses[kind] = engine.makeBus(named: kind.rawValue, parent: engine.sfx)
        }
        self.buses = buses
        ambientBus = engine.makeBus(named: "ambient", parent: engine.sfx)
        // The listener sits at the centre of the screen, facing into it. Within 4 units a sound plays at its own
        // gain, so the edges of the screen are only a few dB quieter than the middle.
        var listener = engine.listener
        listener.position = .zero
        listener.forward = Vector3(x: 0, y: 0, z: -1)
        listener.up = Vector3(x: 0, y: 1, z: 0)
        listener.referenceDistance = 4
        listener.rolloff = 1
        engine.listener = listener
    }

    /// Where a point on the screen sounds.
    static func placement(for point: Vector) -> Placement {
        let x = Float((point.x / World.width) * 2 - 1) * halfWidth
        let y = Float(1 - (point.y / World.height) * 2) * halfHeight
        return .world(x: x, y: y, z: -depth)
    }

    /// Starts `cue`; returns its voice (`.none` if the engine could not start it).
    @discardableResult
    func play(_ cue: SoundCue) -> Voice {
        guard let sound = sounds[cue.kind] else { return .none }
        var options = PlayOptions(gain: cue.gain, pitch: cue.pitch, bus: buses[cue.kind])
        switch cue.kind {
        case .uiClick:
            options.priority = 220
        case .appSound:
            options.placement = .pan(0)
            options.priority = 200
        default:
            options.placement = cue.position.map(Self.placement) ?? .pan(0)
            options.priority = cue.kind == .explosion ? 180 : 150
        }
        let voice = engine.play(sound, options)
        counts[cue.kind, default: 0] += 1
        log.append((frame, time, cue.kind))
        return voice
    }

    /// Keeps the engine loop going and makes it follow the ship: gain and pitch rise with the thrust.
    func updateThrust(level: Double, at position: Vector, audible: Bool) {
        let level = audible ? Float(max(0, min(1, level))) : 0
        if !thrustVoice.isAlive {
            guard let sound = sounds[.thrust] else { return }
            thrustVoice = engine.play(
                sound,
                PlayOptions(
                    gain: 0, loop: true, bus: buses[.thrust], priority: 240,
                    placement: Self.placement(for: position)))
            counts[.thrust, default: 0] += 1
        }
        thrustVoice.setGain(0.08 + 0.62 * level)
        thrustVoice.setPitch(0.75 + 0.55 * level)
        thrustVoice.setPlacement(Self.placement(for: position))
    }

    /// Keeps about `count` quiet looping voices spread around the world (a stress load for measuring the engine).
    /// The first voice the engine refuses (its pool is full of more important ones) ends the top-up until the next
    /// call: asking again at once would be refused again, and each refusal looks through the whole pool.
    func keepAmbientVoices(_ count: Int) {
        guard count > 0 else { return }
        ambientVoices.removeAll { !$0.isAlive }
        let loops: [SoundKind] = [.thrust, .pickup, .laser]
        while ambientVoices.count < count {
            let kind = loops[ambientVoices.count % loops.count]
            guard let sound = sounds[kind] else { return }
            let x = Float(random.double(in: -30...30)), z = Float(random.double(in: -30...30)),
                y = Float(random.double(in: -4...4))
            let voice = engine.play(
                sound,
                PlayOptions(
                    gain: 0.02, pitch: Float(random.double(in: 0.7...1.3)), loop: true,
                    bus: ambientBus, priority: 10, placement: .world(x: x, y: y, z: z)))
            guard voice.isAlive else { return }
            ambientVoices.append(voice)
        }
    }

    var ambientVoiceCount: Int { ambientVoices.count }
}

extension GameAudio {
    /// The soundtrack: every `.ogg`, `.mp3` and `.wav` file in `folder`, in name order.
    static func musicFiles(in folder: String) -> [String] {
        guard let entries = try? Directory.entries(rawPath: Array(folder.utf8)) else { return [] }
        var names: [String] = []
        for entry in entries {
            let name = String(decoding: entry.name, as: UTF8.self)
            let lower = name.lowercased()
            if !name.hasPrefix("."), lower.hasSuffix(".ogg") || lower.hasSuffix(".mp3") || lower.hasSuffix(".wav") {
                names.append(name)
            }
        }
        return names.sorted().map { "\(folder)/\($0)" }
    }
}
