//! Bindings of interface version 0.1.0 (`plugins/wit/v0.1.0`), frozen with it.

use wasmtime::Store;
use wasmtime::component::{Component, HasSelf, Linker};

use crate as api;
use crate::{LogLine, PluginError, State};

wasmtime::component::bindgen!({
    path: "../wit/v0.1.0",
    world: "rules",
});

use cofre::rules::host::Level;
use cofre::rules::types as t;

impl cofre::rules::host::Host for State {
    fn log(&mut self, level: Level, message: String) {
        let level = match level {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        // Bounded: a plugin cannot fill the host's memory through its log.
        if self.logs.len() < 100 {
            self.logs.push(LogLine {
                level: level.into(),
                message: message.chars().take(1000).collect(),
            });
        }
    }

    fn config(&mut self, key: String) -> Option<String> {
        self.config.get(&key).cloned()
    }
}

impl cofre::rules::types::Host for State {}

pub(crate) fn add_to_linker(linker: &mut Linker<State>) -> wasmtime::Result<()> {
    Rules::add_to_linker::<State, HasSelf<State>>(linker, |state| state)
}

pub(crate) struct Runner {
    pre: RulesPre<State>,
}

impl Runner {
    pub(crate) fn new(linker: &Linker<State>, component: &Component) -> Result<Self, PluginError> {
        let pre = linker
            .instantiate_pre(component)
            .map_err(|e| PluginError::Invalid(format!("{e:#}")))?;
        let pre = RulesPre::new(pre).map_err(|e| PluginError::Invalid(format!("{e:#}")))?;
        Ok(Self { pre })
    }
}

fn decision(d: t::Decision) -> api::Decision {
    match d {
        t::Decision::Allow => api::Decision::Allow,
        t::Decision::Deny(denial) => api::Decision::Deny {
            code: denial.code,
            message: denial.message,
        },
    }
}

fn draft_in(d: &api::ChargeDraft) -> t::ChargeDraft {
    t::ChargeDraft {
        now_ms: d.now_ms,
        account_id: d.account_id.clone(),
        correlation_id: d.correlation_id.clone(),
        value: d.value,
        comment: d.comment.clone(),
        expires_in: d.expires_in,
        additional_info: d.additional_info.clone(),
    }
}

fn draft_out(d: t::ChargeDraft) -> api::ChargeDraft {
    api::ChargeDraft {
        now_ms: d.now_ms,
        account_id: d.account_id,
        correlation_id: d.correlation_id,
        value: d.value,
        comment: d.comment,
        expires_in: d.expires_in,
        additional_info: d.additional_info,
    }
}

impl crate::Runner for Runner {
    fn authorize_withdraw(
        &self,
        store: &mut Store<State>,
        input: &api::Withdrawal,
    ) -> wasmtime::Result<api::Decision> {
        let rules = self.pre.instantiate(&mut *store)?;
        let request = t::Withdrawal {
            now_ms: input.now_ms,
            account_id: input.account_id.clone(),
            value: input.value,
            withdraw_key: input.withdraw_key.clone(),
            withdraw_key_type: input.withdraw_key_type.clone(),
            available: input.available,
            blocked: input.blocked,
            recent_withdrawals_ms: input.recent_withdrawals_ms.clone(),
        };
        Ok(decision(
            rules.call_authorize_withdraw(&mut *store, &request)?,
        ))
    }

    fn check_pix_key(
        &self,
        store: &mut Store<State>,
        input: &api::PixKeyRequest,
    ) -> wasmtime::Result<api::Decision> {
        let rules = self.pre.instantiate(&mut *store)?;
        let request = t::PixKeyRequest {
            now_ms: input.now_ms,
            account_id: input.account_id.clone(),
            key: input.key.clone(),
            key_type: input.key_type.clone(),
        };
        Ok(decision(rules.call_check_pix_key(&mut *store, &request)?))
    }

    fn shape_charge(
        &self,
        store: &mut Store<State>,
        input: &api::ChargeDraft,
    ) -> wasmtime::Result<api::ChargeDecision> {
        let rules = self.pre.instantiate(&mut *store)?;
        Ok(
            match rules.call_shape_charge(&mut *store, &draft_in(input))? {
                t::ChargeDecision::Keep(draft) => api::ChargeDecision::Keep(draft_out(draft)),
                t::ChargeDecision::Deny(denial) => api::ChargeDecision::Deny {
                    code: denial.code,
                    message: denial.message,
                },
            },
        )
    }

    fn shape_webhook(
        &self,
        store: &mut Store<State>,
        input: &api::OutgoingEvent,
    ) -> wasmtime::Result<api::EventDecision> {
        let rules = self.pre.instantiate(&mut *store)?;
        let event = t::OutgoingEvent {
            now_ms: input.now_ms,
            event: input.event.clone(),
            payload: input.payload.clone(),
        };
        Ok(match rules.call_shape_webhook(&mut *store, &event)? {
            t::EventDecision::Keep => api::EventDecision::Keep,
            t::EventDecision::Replace(payload) => api::EventDecision::Replace(payload),
            t::EventDecision::Drop => api::EventDecision::Drop,
        })
    }
}
