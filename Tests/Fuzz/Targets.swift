import Glibc

// libFuzzer entry points for Ambience's parsers, built by Tests/Fuzz/run.sh with -sanitize=fuzzer,address.
// One binary serves every target; AMBIENCE_FUZZ_TARGET picks which parser the bytes go to.

private let target = getenv("AMBIENCE_FUZZ_TARGET").map { String(cString: $0) } ?? "decode"
private let scratch: String = {
    let path = "/tmp/ambience-fuzz-\(getpid()).bin"
    return path
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch target {
    case "decode", "wav", "ogg", "mp3":
        fuzzDecoder(bytes)
    case "picture":
        _ = EmbeddedPicture.parseFLACPictureBlock(bytes)
        _ = EmbeddedPicture.sniffMIMEType(bytes)
    case "sfx":
        _ = try? SFXCue(parsing: String(decoding: bytes, as: UTF8.self))
    case "m3u":
        fuzzPlaylist(bytes)
    default:
        fatalError("unknown AMBIENCE_FUZZ_TARGET \(target)")
    }
    return 0
}

/// Writes the bytes to a file and runs the whole decoding path: sniff, open (tags, integrity checks), read, seek.
private func fuzzDecoder(_ bytes: [UInt8]) {
    let fd = open(scratch, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { return }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    guard let decoder = try? AudioFile.open(scratch) else { return }
    let info = decoder.info
    guard info.channels > 0, info.channels <= 8 else { return }
    var buffer = [Float](repeating: 0, count: 1024 * info.channels)
    var total = 0
    while total < 1 << 20, let got = try? buffer.withUnsafeMutableBufferPointer({ (p) throws(DecodingError) -> Int in
        try decoder.read(into: p.baseAddress!, frames: 1024)
    }), got > 0 {
        total += got
    }
    try? decoder.seek(toFrame: info.frames / 2)
    _ = try? buffer.withUnsafeMutableBufferPointer { (p) throws(DecodingError) -> Int in try decoder.read(into: p.baseAddress!, frames: 1024) }
}

/// The library's playlist parser, as `.m3u` (Latin-1 fallback) and as `.m3u8`, with roots that exercise
/// "inside", "outside" and the whole file system. Every entry it accepts must be normalized and inside a root.
private func fuzzPlaylist(_ bytes: [UInt8]) {
    let roots: [[UInt8]] = [Array("/music".utf8), Array("/".utf8)]
    for isUTF8Playlist in [false, true] {
        var parsed = PlaylistFile.Parsed(name: "fuzz")
        PlaylistFile.parse(bytes, folder: Array("/music/lists".utf8), isUTF8Playlist: isUTF8Playlist,
                           roots: roots, into: &parsed)
        for entry in parsed.entries {
            precondition(entry.path == RawPath.normalized(entry.path), "entry not normalized")
            precondition(roots.contains { RawPath.isInside(entry.path, $0) }, "entry outside every root")
            precondition(entry.line >= 1, "entry without a line")
        }
    }
}
