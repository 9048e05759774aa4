package consent

// The reasons a sign-in is refused, as Config.Refused is told.
const (
	RefusedWrongPassphrase = "wrong_passphrase"
	RefusedLockedOut       = "locked_out"
)

// refused tells Config.Refused of a refused sign-in.
func (p *Page) refused(reason string) {
	if p.cfg.Refused != nil {
		p.cfg.Refused(reason)
	}
}
