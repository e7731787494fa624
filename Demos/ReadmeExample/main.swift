import Ambience

let engine = try AudioEngine()  // real-time output; SDL's dummy driver when there is no sound card
engine.session.setCategory(.ambient)  // mix with the user's music; silent in the background
engine.session.setActive(true)

let laser = try engine.load("Assets/SFX/laser.wav")  // a Sound: the asset, loaded once, cached by path
try engine.musicPlayer.setQueue(paths: ["Assets/Music/gravity-wave-theme.ogg", "Assets/Music/orbit-lullaby.mp3"])
engine.musicPlayer.beginGeneratingPlaybackNotifications()
if engine.session.otherMusicWasPlayingAtLaunch {
    print("Your music plays on; the soundtrack stays off")
} else {
    engine.musicPlayer.play()  // gapless, streamed on its own thread through the music bus
}

let shot = engine.play(laser, PlayOptions(gain: 0.8, placement: .world(x: -3, y: 0, z: -1)))  // a Voice
shot.setPitch(1.2)  // a finished voice's handle is harmless: calls return .stale
engine.setReverb(.cave, on: engine.sfx)

while gameIsRunning {
    for event in engine.update() {  // once per frame: every event arrives here, on this thread
        switch event {
        case .session(.routeChange(let change)) where change.reason == .oldDeviceUnavailable:
            showAlert("Playback Paused: audio output was changed")  // Resume → engine.session.resumeAfterRouteChange()
        case .music(.nowPlayingItemDidChange(let item)):
            print("Now playing", item?.title ?? "nothing")
        default: break
        }
    }
}
engine.shutdown()  // the exit rule: music playing at launch is left alone
