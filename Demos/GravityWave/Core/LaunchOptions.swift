import Ambience

/// The command line of `gravity-wave`.
public struct LaunchOptions: Sendable, Equatable {
    public var headless = false
    /// Headless, but at real-time pace through the audio device (SDL's dummy driver without a sound card), so that
    /// `engine.update()` is measured as a real game sees it: in an offline run the engine mixes in `render`, not in
    /// `update()`, and decodes music there instead of on its streaming thread.
    public var realtime = false
    /// Stop after this many seconds of game time (headless default: 10).
    public var seconds: Double?
    public var record: String?
    public var screenshot: String?
    public var screenshotFrame = 60
    public var voices = 0
    public var seed: UInt64 = 1
    public var pilot = false
    public var assets: String?
    public var volumes: [String: Float] = [:]
    public var category = SessionCategory.ambient
    public var help = false

    public init() {}

    public static let usage = """
        usage: gravity-wave [--headless [--realtime]] [--seconds N] [--record OUT.wav] [--screenshot OUT.png] [--screenshot-frame N]
                            [--voices N] [--seed N] [--pilot] [--category ambient|solo-ambient|playback]
                            [--volume BUS=GAIN]... [--assets DIR]

          --headless          no window: a scripted pilot plays, audio renders offline (also chosen when there is no display)
          --realtime          headless at real-time pace through the audio device (no --record): measures engine.update()
                              as a real game frame sees it
          --seconds N         stop after N seconds of game time (headless: 10 by default)
          --record OUT.wav    write the game's audio (headless only)
          --screenshot OUT.png  save the picture after --screenshot-frame frames (60 by default)
          --voices N          keep about N quiet ambient voices playing, to measure the engine under load
          --seed N            the world's random seed (1 by default): a seed always plays the same game
          --pilot             let the scripted pilot fly in the window too
          --category C        the audio session category at start (ambient by default, as UtopiaGL)
          --volume BUS=GAIN   master, music, sfx or ui, 0…1, for this run only
          --assets DIR        the folder holding SFX/ and Music/ (found beside the program by default)
        """

    public static func parse(_ arguments: [String]) throws(GameError) -> LaunchOptions {
        var options = LaunchOptions()
        var rest = arguments[...]
        func value(_ flag: String) throws(GameError) -> String {
            guard let next = rest.popFirst(), !next.hasPrefix("--") else { throw .usage("\(flag) needs a value") }
            return next
        }
        func number(_ flag: String, _ text: String) throws(GameError) -> Double {
            guard let n = Double(text), n.isFinite, n > 0 else { throw .usage("\(flag): '\(text)' is not a number above 0") }
            return n
        }
        func count(_ flag: String, _ text: String, allowZero: Bool = false) throws(GameError) -> Int {
            guard let n = Int(text), n > 0 || (allowZero && n == 0) else { throw .usage("\(flag): '\(text)' is not a whole number above 0") }
            return n
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--headless": options.headless = true
            case "--pilot": options.pilot = true
            case "--realtime":
                options.realtime = true
                options.headless = true
            case "--help", "-h": options.help = true
            case "--seconds": options.seconds = try number(argument, try value(argument))
            case "--record": options.record = try value(argument)
            case "--screenshot": options.screenshot = try value(argument)
            case "--screenshot-frame": options.screenshotFrame = try count(argument, try value(argument))
            case "--voices": options.voices = try count(argument, try value(argument), allowZero: true)
            case "--assets": options.assets = try value(argument)
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else { throw .usage("--seed: '\(text)' is not a whole number") }
                options.seed = seed
            case "--category":
                let text = try value(argument)
                switch text {
                case "ambient": options.category = .ambient
                case "solo-ambient", "soloAmbient": options.category = .soloAmbient
                case "playback": options.category = .playback
                default: throw .usage("--category: '\(text)' is not ambient, solo-ambient or playback")
                }
            case "--volume":
                let text = try value(argument)
                let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, GameSettings.busNames.contains(parts[0]), let gain = Float(parts[1]), gain >= 0, gain <= 1 else {
                    throw .usage("--volume: '\(text)' is not BUS=GAIN with BUS one of \(GameSettings.busNames.joined(separator: ", ")) and GAIN 0…1")
                }
                options.volumes[parts[0]] = gain
            default:
                throw .usage("unknown argument '\(argument)'")
            }
        }
        if options.realtime && options.record != nil { throw .usage("--record cannot go with --realtime (the audio goes to the device)") }
        return options
    }
}
