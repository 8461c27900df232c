package webui

// The admin page's forms (Admin): each is an action, by the form's
// action field, a small method that changes one thing and says how it
// went (adminDone). A new setting of the box is a method of admin.System,
// an action here, and its form in page-admin.html.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/bonesync/bonesync/appliance/admin"
	"github.com/bonesync/bonesync/appliance/auth"
	"github.com/bonesync/bonesync/appliance/users"
)

// adminDone is what an action of the admin page came to: the page shown
// again with its status, a flash or a problem, and what the action made
// (shown once); or, when to is set, a redirect there.
type adminDone struct {
	code           int
	flash, problem string
	d              adminData
	to             string
}

func adminOK(flash string, d adminData) adminDone {
	return adminDone{code: http.StatusOK, flash: flash, d: d}
}

func adminFailed(code int, problem string) adminDone { return adminDone{code: code, problem: problem} }

// adminAction is one form of the admin page.
type adminAction func(u *Admin, r *http.Request, sess auth.Caller) adminDone

// adminActions are the admin page's forms, by their action field.
var adminActions = map[string]adminAction{
	"add":           (*Admin).addUser,
	"reset":         (*Admin).resetPassword,
	"quota":         (*Admin).setQuota,
	"delete":        (*Admin).deleteUser,
	"hand-over":     (*Admin).handOver,
	"remove-data":   (*Admin).removeData,
	"copy-now":      (*Admin).copyNow,
	"copy-settings": (*Admin).copySettings,
	"measure":       (*Admin).measure,
	"probe-pass":    (*Admin).probePass,
}

// confirmedActions are the admin page's forms that ask for the admin's
// password again (POST /admin/copies, auth.Confirmed), by their action
// field.
var confirmedActions = map[string]adminAction{
	"copy-password":   (*Admin).copyPassword,
	"copy-accept-key": (*Admin).copyAcceptKey,
	"emmc-flash":      (*Admin).emmcFlash,
}

// adminPost runs the form's action and shows the page again.
func (u *Admin) adminPost(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	u.act(adminActions, w, r, sess)
}

// confirmedPost runs a form's action that asks for the password again.
func (u *Admin) confirmedPost(w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	u.act(confirmedActions, w, r, sess)
}

// act runs the form's action from actions and shows the page again.
func (u *Admin) act(actions map[string]adminAction, w http.ResponseWriter, r *http.Request, sess auth.Caller) {
	act, ok := actions[r.PostFormValue("action")]
	if !ok {
		http.Error(w, "unknown action", http.StatusBadRequest)
		return
	}
	done := act(u, r, sess)
	if done.to != "" {
		http.Redirect(w, r, done.to, http.StatusSeeOther)
		return
	}
	u.showAdmin(w, sess, done.code, done.flash, done.problem, done.d)
}

// formUser is the user an action of the admin page is about.
func formUser(r *http.Request) string { return strings.TrimSpace(r.PostFormValue("user")) }

// addUser adds a user, with the password typed or, when none is, one made
// and shown once.
func (u *Admin) addUser(r *http.Request, sess auth.Caller) adminDone {
	name, pw := formUser(r), r.PostFormValue("password")
	made := pw == ""
	if made {
		pw = users.NewPassword()
	}
	if err := u.Users.Add(name, pw); err != nil {
		return adminFailed(http.StatusBadRequest, "User not added: "+err.Error())
	}
	u.Log.Info("web: admin added a user", "user", name)
	u.audited(r, sess.User, "added user "+name)
	d := adminData{}
	if made {
		d.NewUser, d.NewPass = name, pw
	}
	return adminOK("User "+name+" added.", d)
}

// resetPassword gives a user a new password, shown once, and logs their
// browsers out.
func (u *Admin) resetPassword(r *http.Request, sess auth.Caller) adminDone {
	name, pw := formUser(r), users.NewPassword()
	if err := u.Users.SetPassword(name, pw); err != nil {
		return adminFailed(http.StatusBadRequest, "Password not reset: "+err.Error())
	}
	if name == sess.User {
		u.Sessions.Renew(r, name)
	}
	u.Log.Info("web: admin reset a password", "user", name)
	u.audited(r, sess.User, "reset the password of "+name)
	return adminOK("Password of "+name+" reset; their browsers are logged out.", adminData{NewUser: name, NewPass: pw})
}

// setQuota sets a user's quota, in MiB (0: none).
func (u *Admin) setQuota(r *http.Request, sess auth.Caller) adminDone {
	name := formUser(r)
	mb, err := strconv.ParseInt(strings.TrimSpace(r.PostFormValue("quota_mb")), 10, 64)
	if err != nil || mb < 0 || mb > 1<<40 {
		return adminFailed(http.StatusBadRequest, "The quota is a whole number of MiB (0: no limit).")
	}
	if err := u.Users.SetQuota(name, mb<<20); err != nil {
		return adminFailed(http.StatusBadRequest, "Quota not set: "+err.Error())
	}
	u.audited(r, sess.User, fmt.Sprintf("set the quota of %s to %d MiB", name, mb))
	return adminOK("Quota of "+name+" set.", adminData{})
}

// deleteUser deletes an account and what is keyed by it; the files stay.
func (u *Admin) deleteUser(r *http.Request, sess auth.Caller) adminDone {
	name := formUser(r)
	if name == users.Admin {
		return adminFailed(http.StatusBadRequest, "The admin account cannot be deleted.")
	}
	if u.Accounts == nil {
		return adminFailed(http.StatusNotImplemented, "This server deletes no accounts.")
	}
	if err := u.Accounts.Delete(name); err != nil {
		return adminFailed(http.StatusBadRequest, "User not deleted: "+err.Error())
	}
	u.Log.Info("web: admin deleted a user (the files stay)", "user", name)
	u.audited(r, sess.User, "deleted user "+name+", their shares, links and notices")
	return adminOK("User "+name+" deleted, with their shares and links. Their files stay on the disk: hand them to another user or remove them below.", adminData{})
}

// handOver hands a deleted user's files to a user, in a folder of theirs.
func (u *Admin) handOver(r *http.Request, sess auth.Caller) adminDone {
	name, to := formUser(r), strings.TrimSpace(r.PostFormValue("to"))
	if u.Users.Exists(name) || !u.Users.Exists(to) {
		return adminFailed(http.StatusBadRequest, "Files are handed over from a deleted user to a user with an account.")
	}
	folder := "Files of " + name
	if err := u.Store.HandOver(name, to, folder); err != nil {
		return adminFailed(http.StatusConflict, "Files not handed over: "+err.Error())
	}
	u.Log.Info("web: admin handed a deleted user's files over", "from", name, "to", to, "folder", folder)
	u.audited(r, sess.User, fmt.Sprintf("handed the files of deleted user %s to %s", name, to))
	return adminOK(fmt.Sprintf("The files of %s are now %s's, in the folder %q.", name, to, folder), adminData{})
}

// removeData removes all a deleted user left: files, trash, versions,
// calendars and contacts.
func (u *Admin) removeData(r *http.Request, sess auth.Caller) adminDone {
	name := formUser(r)
	if u.Users.Exists(name) {
		return adminFailed(http.StatusBadRequest, name+" has an account: delete the user first.")
	}
	err := u.Store.RemoveOwner(name)
	if err == nil && u.Calendars != nil {
		err = u.Calendars.RemoveOwner(name)
	}
	if err != nil {
		return adminFailed(http.StatusInternalServerError, "Not all removed: "+err.Error())
	}
	u.Log.Info("web: admin removed a deleted user's data", "user", name)
	u.audited(r, sess.User, "removed the data of deleted user "+name)
	return adminOK("The files, trash, versions, calendars and contacts of "+name+" are removed.", adminData{})
}

// copyNow starts a copy off the box; the first one's password is shown
// this once.
func (u *Admin) copyNow(r *http.Request, sess auth.Caller) adminDone {
	if u.System == nil {
		return adminFailed(http.StatusNotImplemented, "No copy target is set: copy_target in the config (docs/copies.md).")
	}
	pw, err := u.System.CopyStart()
	d := adminData{CopyPassword: pw}
	if err != nil {
		return adminDone{code: http.StatusConflict, problem: "Copy not started: " + err.Error(), d: d}
	}
	u.Log.Info("web: admin started a copy off the box")
	u.audited(r, sess.User, "started a copy off the box")
	return adminOK("The copy off the box has started; its progress shows below.", d)
}

// copySettings takes the copies' settings from the form.
func (u *Admin) copySettings(r *http.Request, sess auth.Caller) adminDone {
	if u.System == nil {
		return adminFailed(http.StatusNotImplemented, "The copy settings are not set here.")
	}
	f := admin.CopyForm{Target: r.PostFormValue("copy_target"), At: r.PostFormValue("copy_at"),
		Keep: r.PostFormValue("copy_keep"), BwLimit: r.PostFormValue("copy_bwlimit_kib")}
	if err := u.System.CopySet(f, r.PostFormValue("copy_target_password")); err != nil {
		return adminFailed(http.StatusBadRequest, "Copy settings not changed: "+err.Error())
	}
	u.Log.Info("web: admin changed the copy settings")
	u.audited(r, sess.User, "changed the copy settings")
	return adminOK("Copy settings saved: they are in force now.", adminData{})
}

// copyPassword shows the copies' encryption password again.
func (u *Admin) copyPassword(r *http.Request, sess auth.Caller) adminDone {
	if u.System == nil {
		return adminFailed(http.StatusNotImplemented, "No copies are made here.")
	}
	pw, err := u.System.CopyPassword()
	if err != nil {
		return adminFailed(http.StatusConflict, "The copies' password cannot be shown: "+err.Error())
	}
	u.Log.Info("web: admin was shown the copies' password")
	u.audited(r, sess.User, "was shown the copies' encryption password")
	return adminOK("The copies' encryption password is shown below.", adminData{CopyPassword: pw, CopyPasswordAgain: true})
}

// copyAcceptKey accepts the SFTP target's new host key, the one whose
// fingerprint the page showed (the form's offered field).
func (u *Admin) copyAcceptKey(r *http.Request, sess auth.Caller) adminDone {
	if u.System == nil {
		return adminFailed(http.StatusNotImplemented, "No copies are made here.")
	}
	offered := strings.TrimSpace(r.PostFormValue("offered"))
	if offered == "" {
		return adminFailed(http.StatusBadRequest, "Which key? The form names the fingerprint it accepts.")
	}
	ch, err := u.System.CopyAcceptKey(offered)
	if err != nil {
		return adminFailed(http.StatusConflict, "The new host key is not accepted: "+err.Error())
	}
	u.Log.Info("web: admin accepted the copy target's new host key", "host", ch.Host, "was", ch.Pinned, "now", ch.Offered)
	u.audited(r, sess.User, fmt.Sprintf("accepted the copy target %s's new host key %s (was %s)", ch.Host, ch.Offered, ch.Pinned))
	return adminOK("The target's new host key is accepted: the next copy goes to it.", adminData{})
}

// measure runs the benchmark again, in the background; the page polls its
// progress (benchStatus).
func (u *Admin) measure(r *http.Request, sess auth.Caller) adminDone {
	if u.Measure == nil {
		return adminFailed(http.StatusNotImplemented, "This server cannot measure again.")
	}
	if !u.bench.start(u.Measure, u.Log) {
		return adminFailed(http.StatusConflict, "A measurement is already running.")
	}
	u.audited(r, sess.User, "started a new benchmark")
	// Post/redirect/get: reloading the page must not measure again.
	return adminDone{to: "/admin/#bench"}
}

// probePass makes a pass for bonesync probe -token, shown this once with
// the command that uses it.
func (u *Admin) probePass(r *http.Request, sess auth.Caller) adminDone {
	if u.System == nil {
		return adminFailed(http.StatusNotImplemented, "This server lets no probe through.")
	}
	token, expires, err := u.System.ProbePass()
	if err != nil {
		return adminFailed(http.StatusInternalServerError, "No pass made: "+err.Error())
	}
	u.audited(r, sess.User, "made a probe pass")
	return adminOK("Probe pass made.", adminData{ProbePass: token, ProbeUntil: expires, ProbeHost: r.Host})
}

// emmcFlash starts copying the system to the board's eMMC (PID 1's emmc
// flash): it changes what the box boots, so the password is typed again.
// The server stops while PID 1 copies; the page says how it went after.
func (u *Admin) emmcFlash(r *http.Request, sess auth.Caller) adminDone {
	if u.System == nil {
		return adminFailed(http.StatusNotImplemented, "There is no eMMC here.")
	}
	if err := u.System.FlashEMMC(); err != nil {
		return adminFailed(http.StatusConflict, "The eMMC is not flashed: "+err.Error())
	}
	u.Log.Info("web: admin started copying the system to the eMMC")
	u.audited(r, sess.User, "started copying the system to the eMMC")
	return adminOK("Copying the system to the eMMC: the box stops serving for a few minutes while it copies and checks the copy. Then reload this page: it says what to do next.", adminData{})
}
