/// Real tracker modules and MIDI files from Debian's game packages (tecnoballz, ballz-data, pingus-data,
/// openttd-openmsx), and the General MIDI sound font they are rendered with.
enum MusicFormatFiles {
    static let modules = [
        "/usr/share/games/tecnoballz/musics/high-score.mod",
        "/usr/share/games/ballz/finalman-quickie.xm",
        "/usr/share/games/pingus/data/music/gd-giirm.s3m",
        "/usr/share/games/pingus/data/music/gd-matth.it"
    ]
    static let midiFiles = [
        "/usr/share/games/openttd/baseset/openmsx/train_filled_with_cash.mid",
        "/usr/share/games/openttd/baseset/openmsx/coconut_run2.mid"
    ]
    static let timGM = "/usr/share/sounds/sf2/TimGM6mb.sf2"
}
