internal import CIntl
import Glibc

/// The process's locale (`setlocale`): what libc formats and which language gettext answers in. Process-wide state
/// that other threads read without a lock: set it at the start, before any thread.
package enum ProcessLocale {
    /// A part of the locale.
    package enum Category: Sendable {
        /// Every part (`LC_ALL`).
        case all
        /// The messages' language (`LC_MESSAGES`).
        case messages

        fileprivate var code: Int32 {
            switch self {
            case .all: LC_ALL
            case .messages: LC_MESSAGES
            }
        }
    }

    /// Sets `category` to the locale `name` (`setlocale`); `""` takes it from the environment (`LC_ALL`, then the
    /// category's variable, then `LANG`). False, and the locale as it was, when the locale is not installed or the
    /// name holds a NUL.
    @discardableResult
    package static func set(_ category: Category, to name: String) -> Bool {
        guard !name.utf8.contains(0) else { return false }
        return setlocale(category.code, name) != nil
    }
}

/// One gettext text domain (libintl, part of glibc: nothing to link): a program's translations in `.mo` catalogs,
/// looked up by the English text. The language is the messages locale's, or `LANGUAGE`'s. The one file that calls
/// libintl.
package struct MessageCatalog: Sendable {
    /// The domain: the catalogs' file name without `.mo`.
    package let domain: String

    package init(domain: String) {
        self.domain = domain
    }

    /// Looks for the domain's catalogs in `folder` (`folder/<language>/LC_MESSAGES/<domain>.mo`, `bindtextdomain`),
    /// with translations handed out in UTF-8 whatever the locale's character set (`bind_textdomain_codeset`). False
    /// when gettext refused (out of memory, or a NUL in the domain or the folder).
    @discardableResult
    package func bind(catalogs folder: String) -> Bool {
        guard !domain.isEmpty, !domain.utf8.contains(0), !folder.utf8.contains(0) else { return false }
        return bindtextdomain(domain, folder) != nil && bind_textdomain_codeset(domain, "UTF-8") != nil
    }

    /// `english` in the user's language (`dgettext`); `english` itself when no catalog translates it.
    package func translation(of english: String) -> String {
        guard !domain.utf8.contains(0), !english.utf8.contains(0) else { return english }
        return english.withCString { id in
            guard let text = dgettext(domain, id) else { return english }
            return String(cString: text)
        }
    }
}
