package programs

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/lease"
)

// Bank is a ledger of accounts. Commands (JSON):
//
//	{"op":"deposit","account":"a","amount":10}
//	{"op":"withdraw","account":"a","amount":3}
//	{"op":"transfer","from":"a","to":"b","amount":2}
//	{"op":"balance","account":"a"}
//	{"op":"payout","account":"a","amount":3,"to":"acct-at-other-bank"}
//
// A payout withdraws and pays the amount out of the world: its decision
// asks for one side effect, "payout" (payload {"account","amount","to"},
// at most PayoutMaxDuration), which the host runs through its Effector
// once, whichever holder applies the command (host/effects.go).
//
// Amounts are positive integers. A withdrawal or transfer that would take
// an account below zero is answered {"ok":false,"error":"insufficient
// funds"} and journals nothing but its reply, so every retry gets the same
// answer; the balance never goes negative (Apply refuses an event that
// would, so a journal that breaks the rule cannot be folded).
type Bank struct{}

// Name is "bank".
func (Bank) Name() string { return "bank" }

// New returns a ledger with no account.
func (Bank) New() host.State { return &BankState{Balances: map[string]int64{}} }

// BankState is the ledger: each account's balance.
type BankState struct {
	Balances map[string]int64
	// Total is the sum of the balances: deposits minus withdrawals.
	Total int64
}

type bankCmd struct {
	Op      string `json:"op"`
	Account string `json:"account,omitempty"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Amount  int64  `json:"amount,omitempty"`
}

// PayoutMaxDuration is the payout effect's declared maximum duration.
const PayoutMaxDuration = time.Second

// Payout is the payout effect's payload.
type Payout struct {
	Account string `json:"account"`
	Amount  int64  `json:"amount"`
	To      string `json:"to"`
}

type bankEvent struct {
	Account string `json:"a"`
	Amount  int64  `json:"n"`
}

// BankReply is a bank command's reply.
type BankReply struct {
	OK      bool   `json:"ok"`
	Balance int64  `json:"balance"`
	Error   string `json:"error,omitempty"`
}

func badBank(format string, a ...any) error {
	return fmt.Errorf("bank: "+format+": %w", append(a, lease.ErrInvalid)...)
}

// Decide decides a bank command.
func (s *BankState) Decide(cmd host.Command) (host.Decision, error) {
	var c bankCmd
	if err := strictFlatJSON(cmd.Payload, &c, "op", "account", "from", "to", "amount"); err != nil {
		return host.Decision{}, badBank("%v", err)
	}
	account := func(name string) error {
		if name == "" || len(name) > 64 {
			return badBank("an account name of 1 to 64 bytes is required")
		}
		return nil
	}
	amount := func() error {
		if c.Amount <= 0 || c.Amount > 1e15 {
			return badBank("amount %d: a positive integer up to 10^15 is required", c.Amount)
		}
		return nil
	}
	switch c.Op {
	case "balance":
		if err := account(c.Account); err != nil {
			return host.Decision{}, err
		}
		return reply(BankReply{OK: true, Balance: s.Balances[c.Account]}, nil)
	case "deposit":
		if err := firstErr(account(c.Account), amount()); err != nil {
			return host.Decision{}, err
		}
		if s.Balances[c.Account] > 1e18-c.Amount {
			return reply(BankReply{Balance: s.Balances[c.Account], Error: "balance limit"}, nil)
		}
		return reply(BankReply{OK: true, Balance: s.Balances[c.Account] + c.Amount},
			[]host.Event{event("deposited", bankEvent{c.Account, c.Amount})})
	case "withdraw":
		if err := firstErr(account(c.Account), amount()); err != nil {
			return host.Decision{}, err
		}
		if s.Balances[c.Account] < c.Amount {
			return reply(BankReply{Balance: s.Balances[c.Account], Error: "insufficient funds"}, nil)
		}
		return reply(BankReply{OK: true, Balance: s.Balances[c.Account] - c.Amount},
			[]host.Event{event("withdrawn", bankEvent{c.Account, c.Amount})})
	case "payout":
		if err := firstErr(account(c.Account), account(c.To), amount()); err != nil {
			return host.Decision{}, err
		}
		if s.Balances[c.Account] < c.Amount {
			return reply(BankReply{Balance: s.Balances[c.Account], Error: "insufficient funds"}, nil)
		}
		d, err := reply(BankReply{OK: true, Balance: s.Balances[c.Account] - c.Amount},
			[]host.Event{event("withdrawn", bankEvent{c.Account, c.Amount})})
		if err != nil {
			return d, err
		}
		p, err := json.Marshal(Payout{Account: c.Account, Amount: c.Amount, To: c.To})
		if err != nil {
			return host.Decision{}, err
		}
		d.Effects = []host.EffectRequest{{Key: "payout", Payload: p, MaxDuration: PayoutMaxDuration}}
		return d, nil
	case "transfer":
		if err := firstErr(account(c.From), account(c.To), amount()); err != nil {
			return host.Decision{}, err
		}
		if c.From == c.To {
			return host.Decision{}, badBank("a transfer needs two accounts")
		}
		if s.Balances[c.From] < c.Amount {
			return reply(BankReply{Balance: s.Balances[c.From], Error: "insufficient funds"}, nil)
		}
		if s.Balances[c.To] > 1e18-c.Amount {
			return reply(BankReply{Balance: s.Balances[c.From], Error: "balance limit"}, nil)
		}
		return reply(BankReply{OK: true, Balance: s.Balances[c.From] - c.Amount}, []host.Event{
			event("withdrawn", bankEvent{c.From, c.Amount}), event("deposited", bankEvent{c.To, c.Amount})})
	}
	return host.Decision{}, badBank("unknown op %q (deposit, withdraw, transfer, payout, balance)", c.Op)
}

// Apply folds a deposited or withdrawn event.
func (s *BankState) Apply(ev host.Event) error {
	var e bankEvent
	if err := decodeBankEvent(ev.Data, &e); err != nil {
		return fmt.Errorf("bank event %s: %v", ev.Kind, err)
	}
	if e.Amount <= 0 {
		return fmt.Errorf("bank event %s: amount %d is not positive", ev.Kind, e.Amount)
	}
	switch ev.Kind {
	case "deposited":
		s.Balances[e.Account] += e.Amount
		s.Total += e.Amount
	case "withdrawn":
		if s.Balances[e.Account] < e.Amount {
			return fmt.Errorf("bank: withdrawing %d from %s would leave %d", e.Amount, e.Account, s.Balances[e.Account]-e.Amount)
		}
		s.Balances[e.Account] -= e.Amount
		s.Total -= e.Amount
	default:
		return fmt.Errorf("bank: unknown event %q", ev.Kind)
	}
	return nil
}
