package auth

// Way is how a login comes in. What each takes, and what it makes of a
// two-factor account's own password, is one table (ways): the door reads
// it, never a protocol's name.
type Way int

const (
	// basicPassword is HTTP Basic credentials: a password or an app
	// password (the sync clients, WebDAV, CalDAV, the Nextcloud protocol).
	basicPassword Way = iota + 1
	// basicOwn is HTTP Basic on a route that changes the account or the
	// box (Account, Admin, Confirmed): the account's own password only.
	basicOwn
	// Form is the web login form's password: a two-factor account's right
	// one is NeedsCode, half a login.
	Form
	// formCode is the web login form's second step: a one-time code or a
	// recovery code.
	formCode
	// Retyped is a logged-in page's password typed again (the account
	// page's current password, the admin page's confirmation).
	Retyped
	// linkPassword is a public link's password.
	linkPassword
	// SSHPassword is an SSH password (SFTP).
	SSHPassword
	// sshKey is an SSH key (SFTP).
	sshKey
	// passkeyAlone is a passkey on the web login form, with no password
	// (passkeys.go): the passkey asks its own PIN or fingerprint.
	passkeyAlone
	// passkeyFactor is a passkey in place of the code, after the
	// password of a two-factor account.
	passkeyFactor
)

// twoFactor is what a way makes of a two-factor account's own password.
type twoFactor int

const (
	// refused: the password alone never logs in; the account's clients
	// use app passwords and keys, its browsers the form and a code.
	refused twoFactor = iota
	// half: the password is half a login, a code follows (formCode).
	half
	// whole: the account is already in (a session, a code just taken).
	whole
)

// ways is the rule of each way in.
var ways = [...]struct {
	// proto names the way in the log and the audit log.
	proto string
	// apps: an app password is taken as well as the account's own.
	apps      bool
	twoFactor twoFactor
}{
	basicPassword: {"https", true, refused},
	basicOwn:      {"https", false, refused},
	Form:          {"web", false, half},
	formCode:      {"web+code", false, whole},
	Retyped:       {"web", false, whole},
	linkPassword:  {"link", false, whole},
	SSHPassword:   {"sftp", true, refused},
	sshKey:        {"sftp key", false, whole},
	passkeyAlone:  {"web passkey", false, whole},
	passkeyFactor: {"web+passkey", false, whole},
}

// proto is the way's name in the logs.
func (w Way) proto() string { return ways[w].proto }
