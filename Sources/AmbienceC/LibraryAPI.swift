// ambience.h: the media library.

import Ambience
import CAmbience

@_cdecl("ambience_library_open")
public func ambience_library_open(
    _ engine: OpaquePointer?, _ folders: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int,
    _ databasePath: UnsafePointer<CChar>?,
    _ outLibrary: UnsafeMutablePointer<OpaquePointer?>?
) -> ambience_status {
    api("ambience_library_open") {
        let box = try engineBox(engine)
        let folders = try strings(folders, count: count, "folders")
        let database = try optionalString(databasePath, "database_path")
        let out = try output(outLibrary, "out_library")
        let library = try MediaLibrary(folders: folders.isEmpty ? nil : folders, databasePath: database)
        let handle = registry.withLock { state -> UInt in
            let handle = HandleKind.library.handle(serial: state.serial())
            if state.engines[box.handle] != nil {
                state.libraries[handle] = LibraryBox(handle: handle, owner: box, library: library)
            }
            return handle
        }
        out.pointee = OpaquePointer(bitPattern: handle)
    }
}

@_cdecl("ambience_library_close")
public func ambience_library_close(_ library: OpaquePointer?) -> ambience_status {
    api("ambience_library_close") {
        let box = try libraryBox(library)
        guard registry.withLock({ $0.libraries.removeValue(forKey: box.handle) }) != nil else {
            throw APIError(AMBIENCE_ERROR_DESTROYED_HANDLE, "library was closed")
        }
        box.endAllNotifications()
    }
}

@_cdecl("ambience_library_scan")
public func ambience_library_scan(_ library: OpaquePointer?, _ out: UnsafeMutablePointer<ambience_scan_report>?)
    -> ambience_status
{
    api("ambience_library_scan") {
        let box = try libraryBox(library)
        let report = try box.library.scan()
        out?.pointee = ambience_scan_report(
            files: Int64(report.files), added: Int64(report.added), updated: Int64(report.updated),
            removed: Int64(report.removed), failed: Int64(report.failed.count),
            warnings: Int64(report.warnings.count), playlists: Int64(report.playlists),
            seconds: report.duration)
    }
}

@_cdecl("ambience_library_analyze_loudness")
public func ambience_library_analyze_loudness(_ library: OpaquePointer?, _ out: UnsafeMutablePointer<Int64>?)
    -> ambience_status
{
    api("ambience_library_analyze_loudness") {
        let box = try libraryBox(library)
        let report = try box.library.analyzeLoudness()
        out?.pointee = Int64(report.measured)
    }
}

@_cdecl("ambience_library_list")
public func ambience_library_list(
    _ library: OpaquePointer?, _ tag: ambience_tag, _ filter: UnsafePointer<CChar>?,
    _ outCount: UnsafeMutablePointer<Int>?
) -> ambience_status {
    api("ambience_library_list") {
        let box = try libraryBox(library)
        let filter = try optionalString(filter, "filter")
        let out = try output(outCount, "out_count")
        var query = MediaQuery.songs(in: box.library)
        if let filter {
            let property: MediaItemProperty
            switch tag {
            case AMBIENCE_TAG_TITLE: property = .title
            case AMBIENCE_TAG_ARTIST: property = .artist
            case AMBIENCE_TAG_ALBUM: property = .albumTitle
            case AMBIENCE_TAG_ALBUM_ARTIST: property = .albumArtist
            case AMBIENCE_TAG_GENRE: property = .genre
            case AMBIENCE_TAG_COMPOSER: property = .composer
            default: throw APIError.invalid("filter_tag is \(tag.rawValue), not a tag the library can filter on")
            }
            query.addFilterPredicate(
                MediaPropertyPredicate(value: filter, forProperty: property, comparisonType: .contains))
        }
        let items = try query.results().items
        box.listing.withLock { $0 = items }
        out.pointee = items.count
    }
}

@_cdecl("ambience_library_get_item_tag")
public func ambience_library_get_item_tag(
    _ library: OpaquePointer?, _ index: Int, _ tag: ambience_tag,
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int,
    _ required: UnsafeMutablePointer<Int>?
) -> ambience_status {
    api("ambience_library_get_item_tag") {
        let box = try libraryBox(library)
        let field = try tagField(tag)
        let item = box.listing.withLock { listing in listing.indices.contains(index) ? listing[index] : nil }
        guard let item else {
            throw APIError.invalid(
                "index \(UInt(bitPattern: index)) is outside the listing (\(box.listing.withLock { $0.count }) items)")
        }
        try copyOut(field(item) ?? "", buffer, size, required)
    }
}

@_cdecl("ambience_music_set_queue_from_library")
public func ambience_music_set_queue_from_library(_ engine: OpaquePointer?, _ library: OpaquePointer?)
    -> ambience_status
{
    api("ambience_music_set_queue_from_library") {
        let box = try engineBox(engine)
        let libraryBox = try libraryBox(library)
        guard libraryBox.owner === box else {
            throw APIError(AMBIENCE_ERROR_WRONG_ENGINE, "library belongs to another engine")
        }
        box.engine.musicPlayer.setQueue(with: MediaItemCollection(items: libraryBox.listing.withLock { $0 }))
    }
}

@_cdecl("ambience_library_begin_change_notifications")
public func ambience_library_begin_change_notifications(_ library: OpaquePointer?) -> ambience_status {
    api("ambience_library_begin_change_notifications") {
        let box = try libraryBox(library)
        box.notificationDepth.withLock { $0 += 1 }
        box.library.beginGeneratingLibraryChangeNotifications()
    }
}

@_cdecl("ambience_library_end_change_notifications")
public func ambience_library_end_change_notifications(_ library: OpaquePointer?) -> ambience_status {
    api("ambience_library_end_change_notifications") {
        let box = try libraryBox(library)
        let balanced = box.notificationDepth.withLock { depth -> Bool in
            guard depth > 0 else { return false }
            depth -= 1
            return true
        }
        guard balanced else { throw APIError.invalid("no ambience_library_begin_change_notifications to end") }
        box.library.endGeneratingLibraryChangeNotifications()
    }
}
