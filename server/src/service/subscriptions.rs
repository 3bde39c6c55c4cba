//! Subscriptions: a customer charged the same value on a schedule (seed rule 5).
//!
//! The schedule is computed, never stored: instalment `n` is generated on the
//! subscription's `dayGenerateCharge` (clamped to short months: day 31 is February's
//! last day) every period from the first such day on or after the start, and is due
//! `dayDue` days later. An instalment's charge is issued on its generation day (the
//! background [`Subscriptions::generate_due`]) or earlier by the payment book, never at
//! creation, and exactly once: its charge's correlationID is derived from the
//! subscription and the instalment number, so the charges service's idempotency makes
//! repeated and concurrent issues answer the same charge. With `chargeType` BOLETO each
//! charge also gets a registered boleto (barcode and typed line).

use serde_json::json;
use time::{Date, Duration, Month};
use tracing::instrument;

use super::applications::{ApplicationType, Caller};
use super::boleto;
use super::charges::{ChargeError, Charges, NewCharge};
use super::clock::{BRT_OFFSET_MS, SharedClock, brasilia_date, date_text};
use super::customers::{CustomerInput, Customers};
use super::payment_book::{self, Party, Slip, SlipKind};
use super::tax_id::TaxId;
use super::{FieldError, Page, PageInfo, Problem, Validation, idempotency};
use crate::store::{
    self, Store, StoreError,
    idempotency::Claim,
    subscriptions::{InstalmentRow, SubscriptionRow},
};

/// The compensation code Cofre's boletos carry in the sandbox's registry.
pub const BANK_CODE: &str = "999";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frequency {
    Weekly,
    Biweekly,
    Monthly,
    Bimonthly,
    Quarterly,
    Semiannually,
    Annually,
}

enum Step {
    Days(i64),
    Months(u32),
}

impl Frequency {
    pub const ALL: [Frequency; 7] = [
        Frequency::Weekly,
        Frequency::Biweekly,
        Frequency::Monthly,
        Frequency::Bimonthly,
        Frequency::Quarterly,
        Frequency::Semiannually,
        Frequency::Annually,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Frequency::Weekly => "WEEKLY",
            Frequency::Biweekly => "BIWEEKLY",
            Frequency::Monthly => "MONTHLY",
            Frequency::Bimonthly => "BIMONTHLY",
            Frequency::Quarterly => "QUARTERLY",
            Frequency::Semiannually => "SEMIANNUALLY",
            Frequency::Annually => "ANNUALLY",
        }
    }

    pub fn parse(value: &str) -> Option<Frequency> {
        Frequency::ALL
            .into_iter()
            .find(|f| f.as_str() == value.trim())
    }

    fn step(self) -> Step {
        match self {
            Frequency::Weekly => Step::Days(7),
            Frequency::Biweekly => Step::Days(14),
            Frequency::Monthly => Step::Months(1),
            Frequency::Bimonthly => Step::Months(2),
            Frequency::Quarterly => Step::Months(3),
            Frequency::Semiannually => Step::Months(6),
            Frequency::Annually => Step::Months(12),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChargeType {
    Pix,
    Boleto,
}

impl ChargeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChargeType::Pix => "PIX",
            ChargeType::Boleto => "BOLETO",
        }
    }

    pub fn parse(value: &str) -> Option<ChargeType> {
        [ChargeType::Pix, ChargeType::Boleto]
            .into_iter()
            .find(|c| c.as_str() == value.trim())
    }
}

/// `day` of `year`/`month`, or the month's last day when it is shorter.
fn clamped(year: i32, month: Month, day: u8) -> Date {
    let last = time::util::days_in_month(month, year);
    Date::from_calendar_date(year, month, day.min(last)).expect("day within the month")
}

fn add_months(year: i32, month: Month, months: u32) -> (i32, Month) {
    let index = year * 12 + i32::from(u8::from(month)) - 1 + months as i32;
    let month = Month::try_from((index.rem_euclid(12) + 1) as u8).expect("1..=12");
    (index.div_euclid(12), month)
}

/// When instalments are generated and due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub frequency: Frequency,
    pub day_generate_charge: u8,
    pub day_due: u16,
    pub start: Date,
}

/// One instalment of the schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instalment {
    pub number: u32,
    pub generation: Date,
    pub due: Date,
}

impl Schedule {
    /// The first generation day on or after the start.
    fn first(&self) -> Date {
        let this_month = clamped(
            self.start.year(),
            self.start.month(),
            self.day_generate_charge,
        );
        if this_month >= self.start {
            return this_month;
        }
        let (year, month) = add_months(self.start.year(), self.start.month(), 1);
        clamped(year, month, self.day_generate_charge)
    }

    /// Instalment `number` (1-based).
    pub fn instalment(&self, number: u32) -> Instalment {
        let first = self.first();
        let generation = match self.frequency.step() {
            Step::Days(days) => first + Duration::days(days * i64::from(number - 1)),
            Step::Months(months) => {
                let (year, month) = add_months(first.year(), first.month(), months * (number - 1));
                clamped(year, month, self.day_generate_charge)
            }
        };
        Instalment {
            number,
            generation,
            due: generation + Duration::days(i64::from(self.day_due)),
        }
    }

    /// Every instalment generated on or before `last`, in order.
    pub fn until(&self, last: Date) -> Vec<Instalment> {
        (1..)
            .map(|n| self.instalment(n))
            .take_while(|i| i.generation <= last)
            .collect()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SubscriptionError {
    #[error("invalid fields")]
    Validation(Vec<FieldError>),
    #[error("subscription not found")]
    NotFound,
    #[error("the correlationID was used with another body")]
    CorrelationIdConflict,
    #[error("the subscription is canceled")]
    Canceled,
    #[error("no instalment is generated up to that month")]
    PaymentBookEmpty,
    #[error(transparent)]
    Charge(#[from] ChargeError),
    #[error("boleto: {0}")]
    Boleto(#[from] boleto::BoletoError),
    #[error("payment book: {0}")]
    Pdf(#[from] payment_book::PaymentBookError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A new subscription as the client sent it.
#[derive(Clone, Debug, Default)]
pub struct NewSubscription {
    pub correlation_id: Option<String>,
    pub value: Option<i64>,
    pub customer: Option<CustomerInput>,
    pub frequency: Option<String>,
    pub day_generate_charge: Option<i64>,
    pub day_due: Option<i64>,
    pub kind: Option<String>,
    pub charge_type: Option<String>,
}

/// The subscription's customer as stored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Payer {
    pub name: String,
    #[serde(rename = "taxID")]
    pub tax_id: String,
    pub email: Option<String>,
    pub phone: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Subscription {
    pub row: SubscriptionRow,
    pub customer: Payer,
    pub schedule: Schedule,
}

impl Subscription {
    fn from_row(row: SubscriptionRow) -> Result<Self, StoreError> {
        let corrupt =
            |what: &str| StoreError::Corrupt(format!("{what} of subscription {}", row.id));
        let customer = serde_json::from_str(&row.customer).map_err(|_| corrupt("customer"))?;
        let format = time::macros::format_description!("[year]-[month]-[day]");
        let schedule = Schedule {
            frequency: Frequency::parse(&row.frequency).ok_or_else(|| corrupt("frequency"))?,
            day_generate_charge: u8::try_from(row.day_generate_charge)
                .map_err(|_| corrupt("dayGenerateCharge"))?,
            day_due: u16::try_from(row.day_due).map_err(|_| corrupt("dayDue"))?,
            start: Date::parse(&row.start_date, &format).map_err(|_| corrupt("start date"))?,
        };
        Ok(Self {
            row,
            customer,
            schedule,
        })
    }

    /// `Subscription:<id>` in base64, the global id integrators know.
    pub fn global_id(&self) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(format!("Subscription:{}", self.row.id))
    }

    pub fn charge_type(&self) -> ChargeType {
        ChargeType::parse(&self.row.charge_type).unwrap_or(ChargeType::Pix)
    }
}

/// An instalment of the schedule with its charge once issued.
#[derive(Clone, Debug)]
pub struct InstalmentView {
    pub instalment: Instalment,
    pub issued: Option<InstalmentRow>,
    pub charge: Option<store::charges::ChargeRow>,
}

#[derive(Clone, Debug)]
pub struct Subscriptions {
    store: Store,
    clock: SharedClock,
    charges: Charges,
    customers: Customers,
}

impl Subscriptions {
    pub fn new(store: Store, clock: SharedClock, charges: Charges, customers: Customers) -> Self {
        Self {
            store,
            clock,
            charges,
            customers,
        }
    }

    /// Today in Brasília.
    fn today(&self) -> Date {
        brasilia_date(self.clock.now_millis())
    }

    /// Creates a subscription for the caller's account; no charge is issued now. Same
    /// correlationID and body: the existing one (`false`); another body: conflict.
    #[instrument(name = "service.subscriptions.create", skip_all)]
    pub async fn create(
        &self,
        caller: &Caller,
        new: NewSubscription,
    ) -> Result<(Subscription, bool), SubscriptionError> {
        let mut v = Validation::default();
        let correlation_id = v.correlation_id(new.correlation_id.as_deref());
        match new.value {
            None => v.add("value", Problem::Required),
            Some(value) if !(1..=9_999_999_999).contains(&value) => {
                v.add("value", Problem::Invalid)
            }
            Some(_) => {}
        }
        let frequency = match new
            .frequency
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())
        {
            None => {
                v.add("frequency", Problem::Required);
                None
            }
            Some(f) => Frequency::parse(f).or_else(|| {
                v.add("frequency", Problem::UnknownValue);
                None
            }),
        };
        match new.day_generate_charge {
            None => v.add("dayGenerateCharge", Problem::Required),
            Some(d) if !(1..=31).contains(&d) => v.add("dayGenerateCharge", Problem::Invalid),
            Some(_) => {}
        }
        match new.day_due {
            None => v.add("dayDue", Problem::Required),
            Some(d) if !(3..=60).contains(&d) => v.add("dayDue", Problem::Invalid),
            Some(_) => {}
        }
        match new.kind.as_deref().map(str::trim) {
            None | Some("") => v.add("type", Problem::Required),
            Some("RECURRENT") => {}
            Some(_) => v.add("type", Problem::UnknownValue),
        }
        let charge_type = match new
            .charge_type
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            None => Some(ChargeType::Pix),
            Some(c) => ChargeType::parse(c).or_else(|| {
                v.add("chargeType", Problem::UnknownValue);
                None
            }),
        };
        let customer = match &new.customer {
            None => {
                v.add("customer", Problem::Required);
                None
            }
            Some(input) => match self
                .customers
                .prepare(&caller.company_id, "customer.", input)
            {
                Ok(row) if row.tax_id.is_some() => Some(Payer {
                    name: row.name,
                    tax_id: row.tax_id.unwrap_or_default(),
                    email: row.email,
                    phone: row.phone,
                }),
                Ok(_) => {
                    v.add("customer.taxID", Problem::Required);
                    None
                }
                Err(errors) => {
                    for e in errors {
                        v.add(e.field, e.problem);
                    }
                    None
                }
            },
        };
        v.finish().map_err(SubscriptionError::Validation)?;
        let (correlation_id, value, frequency, charge_type, customer) = (
            correlation_id.expect("validated above"),
            new.value.expect("validated above"),
            frequency.expect("validated above"),
            charge_type.expect("validated above"),
            customer.expect("validated above"),
        );
        let day_generate_charge = new.day_generate_charge.expect("validated above");
        let day_due = new.day_due.expect("validated above");
        let hash = idempotency::request_hash(&json!({
            "value": value, "customer": customer, "frequency": frequency.as_str(),
            "dayGenerateCharge": day_generate_charge, "dayDue": day_due,
            "chargeType": charge_type.as_str(),
        }));
        let now = self.clock.now_millis();
        let row = SubscriptionRow {
            id: store::new_id("sub"),
            company_id: caller.company_id.clone(),
            account_id: caller.account_id.clone(),
            application_id: Some(caller.application_id.clone()),
            correlation_id: correlation_id.as_str().to_owned(),
            value,
            customer: serde_json::to_string(&customer).expect("serialises"),
            frequency: frequency.as_str().to_owned(),
            day_generate_charge,
            day_due,
            kind: "RECURRENT".into(),
            charge_type: charge_type.as_str().to_owned(),
            status: "ACTIVE".into(),
            start_date: date_text(self.today()),
            created_at: now,
            updated_at: now,
            canceled_at: None,
        };
        let mut tx = self.store.begin().await?;
        let claim = store::idempotency::claim(
            &mut tx,
            &caller.company_id,
            "subscription",
            correlation_id.as_str(),
            &hash,
            &row.id,
            now,
        )
        .await?;
        if let Claim::Existing {
            request_hash,
            resource_id,
        } = claim
        {
            drop(tx);
            if request_hash != hash {
                return Err(SubscriptionError::CorrelationIdConflict);
            }
            let existing = store::subscriptions::find(self.store.pool(), &resource_id)
                .await?
                .ok_or(SubscriptionError::NotFound)?;
            return Ok((Subscription::from_row(existing)?, false));
        }
        store::subscriptions::insert(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        tracing::info!(subscription = %row.id, "subscription created");
        Ok((Subscription::from_row(row)?, true))
    }

    /// A subscription the caller may see (its company's MASTER, or the application of
    /// its account), by id or globalID.
    pub async fn get(
        &self,
        caller: &Caller,
        any_id: &str,
    ) -> Result<Subscription, SubscriptionError> {
        let any_id = any_id.trim();
        let id = {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD
                .decode(any_id)
                .ok()
                .and_then(|d| String::from_utf8(d).ok())
                .and_then(|d| d.strip_prefix("Subscription:").map(str::to_owned))
                .unwrap_or_else(|| any_id.to_owned())
        };
        let row = store::subscriptions::find(self.store.pool(), &id)
            .await?
            .filter(|s| {
                s.company_id == caller.company_id
                    && (caller.is_master() || s.account_id == caller.account_id)
            })
            .ok_or(SubscriptionError::NotFound)?;
        Ok(Subscription::from_row(row)?)
    }

    pub async fn list(
        &self,
        caller: &Caller,
        page: Page,
    ) -> Result<(Vec<Subscription>, PageInfo), SubscriptionError> {
        let account = (!caller.is_master()).then_some(caller.account_id.as_str());
        let (rows, total) = store::subscriptions::list(
            self.store.pool(),
            &caller.company_id,
            account,
            page.skip,
            page.limit,
        )
        .await?;
        let subscriptions = rows
            .into_iter()
            .map(Subscription::from_row)
            .collect::<Result<_, _>>()?;
        Ok((subscriptions, page.info(total)))
    }

    /// ACTIVE -> CANCELED: no instalment is issued after this; issued charges stay.
    #[instrument(name = "service.subscriptions.cancel", skip_all)]
    pub async fn cancel(
        &self,
        caller: &Caller,
        any_id: &str,
    ) -> Result<Subscription, SubscriptionError> {
        let found = self.get(caller, any_id).await?;
        let mut tx = self.store.begin().await?;
        if !store::subscriptions::cancel(&mut tx, &found.row.id, self.clock.now_millis()).await? {
            return Err(SubscriptionError::Canceled);
        }
        tx.commit().await.map_err(StoreError::from)?;
        let row = store::subscriptions::find(self.store.pool(), &found.row.id)
            .await?
            .ok_or(SubscriptionError::NotFound)?;
        Ok(Subscription::from_row(row)?)
    }

    /// The schedule up to the end of next year with what was issued, paged.
    pub async fn instalments(
        &self,
        caller: &Caller,
        any_id: &str,
        page: Page,
    ) -> Result<(Subscription, Vec<InstalmentView>, PageInfo), SubscriptionError> {
        let subscription = self.get(caller, any_id).await?;
        let horizon = Date::from_calendar_date(self.today().year() + 1, Month::December, 31)
            .expect("a valid date");
        let all = subscription.schedule.until(horizon);
        let issued =
            store::subscriptions::instalments(self.store.pool(), &subscription.row.id).await?;
        let mut views = Vec::new();
        for instalment in all
            .iter()
            .skip(usize::try_from(page.skip).unwrap_or(usize::MAX))
            .take(usize::try_from(page.limit).unwrap_or(0))
        {
            let issued = issued
                .iter()
                .find(|i| i.number == i64::from(instalment.number))
                .cloned();
            let charge = match &issued {
                Some(i) => {
                    store::charges::find(
                        self.store.pool(),
                        Some(&subscription.row.company_id),
                        &i.charge_id,
                    )
                    .await?
                }
                None => None,
            };
            views.push(InstalmentView {
                instalment: *instalment,
                issued,
                charge,
            });
        }
        let info = page.info(all.len() as i64);
        Ok((subscription, views, info))
    }

    /// The caller standing for the subscription when its charges are issued.
    fn issuer(subscription: &Subscription) -> Caller {
        Caller {
            application_id: subscription
                .row
                .application_id
                .clone()
                .unwrap_or_else(|| "subscription".into()),
            client_id: String::new(),
            company_id: subscription.row.company_id.clone(),
            account_id: subscription.row.account_id.clone(),
            kind: ApplicationType::Api,
            scopes: None,
            allowed_ips: Vec::new(),
        }
    }

    /// Issues the charges of `due` that are not issued yet and answers every
    /// instalment's row, in order.
    async fn issue_all(
        &self,
        subscription: &Subscription,
        due: &[Instalment],
    ) -> Result<Vec<InstalmentRow>, SubscriptionError> {
        let issued =
            store::subscriptions::instalments(self.store.pool(), &subscription.row.id).await?;
        let mut rows = Vec::with_capacity(due.len());
        for instalment in due {
            match issued
                .iter()
                .find(|i| i.number == i64::from(instalment.number))
            {
                Some(row) => rows.push(row.clone()),
                None => rows.push(self.issue(subscription, *instalment).await?),
            }
        }
        Ok(rows)
    }

    /// Issues the charge of one instalment: idempotent, also under concurrent calls
    /// (the charge's correlationID names the instalment, and the instalment row keeps
    /// the first record).
    async fn issue(
        &self,
        subscription: &Subscription,
        instalment: Instalment,
    ) -> Result<InstalmentRow, SubscriptionError> {
        let number = i64::from(instalment.number);
        // The end of the due day in Brasília; an instalment issued after its due day
        // (its account could not be charged then) gets until the end of tomorrow.
        let end_of = |day: Date| {
            (day + Duration::days(1))
                .midnight()
                .assume_utc()
                .unix_timestamp()
                * 1000
                + BRT_OFFSET_MS
                - 1
        };
        let due_end = end_of(instalment.due.max(self.today() + Duration::days(1)));
        let customer = &subscription.customer;
        let new = NewCharge {
            correlation_id: Some(format!("subscription:{}:{number}", subscription.row.id)),
            value: Some(subscription.row.value),
            comment: Some(format!(
                "Assinatura {} - parcela {number}",
                subscription.row.correlation_id
            )),
            expires_in: None,
            expires_at: Some(due_end),
            customer: Some(CustomerInput {
                name: Some(customer.name.clone()),
                email: customer.email.clone(),
                phone: customer.phone.clone(),
                tax_id: Some(customer.tax_id.clone()),
                correlation_id: Some(format!("subscription:{}", subscription.row.id)),
                address: None,
            }),
            additional_info: Vec::new(),
        };
        let (charge, _) = self
            .charges
            .create(&Self::issuer(subscription), new)
            .await?;
        let (barcode, line) = match subscription.charge_type() {
            ChargeType::Pix => (None, None),
            ChargeType::Boleto => {
                let barcode = boleto::barcode(
                    BANK_CODE,
                    instalment.due,
                    subscription.row.value,
                    &free_field(&charge.row.id),
                )?;
                let line = boleto::typed_line(&barcode)?;
                (Some(barcode), Some(line))
            }
        };
        let row = InstalmentRow {
            subscription_id: subscription.row.id.clone(),
            number,
            charge_id: charge.row.id.clone(),
            generation_date: date_text(instalment.generation),
            due_date: date_text(instalment.due),
            boleto_barcode: barcode,
            boleto_line: line,
            created_at: self.clock.now_millis(),
        };
        let mut tx = self.store.begin().await?;
        store::subscriptions::insert_instalment(&mut tx, &row).await?;
        tx.commit().await.map_err(StoreError::from)?;
        Ok(row)
    }

    /// The payment book of `month`/`year`: issues every instalment generated up to the
    /// end of that month that has no charge yet (seed rule 5), then renders one slip per
    /// instalment as a PDF. `month`/`year` go at most to December of next year.
    #[instrument(name = "service.subscriptions.payment_book", skip_all)]
    pub async fn payment_book(
        &self,
        caller: &Caller,
        any_id: &str,
        month: Option<i64>,
        year: Option<i64>,
    ) -> Result<Vec<u8>, SubscriptionError> {
        // CONTRACT's order: an id that is not the caller's (404) before the query (400).
        let subscription = self.get(caller, any_id).await?;
        let today = self.today();
        let mut v = Validation::default();
        let month = match month {
            None => {
                v.add("month", Problem::Required);
                None
            }
            Some(m) => u8::try_from(m)
                .ok()
                .and_then(|m| Month::try_from(m).ok())
                .or_else(|| {
                    v.add("month", Problem::Invalid);
                    None
                }),
        };
        let year = match year {
            None => {
                v.add("year", Problem::Required);
                None
            }
            Some(y) if !(2000..=i64::from(today.year()) + 1).contains(&y) => {
                v.add("year", Problem::Invalid);
                None
            }
            Some(y) => Some(y as i32),
        };
        v.finish().map_err(SubscriptionError::Validation)?;
        let (month, year) = (month.expect("validated"), year.expect("validated"));
        if subscription.row.status != "ACTIVE" {
            return Err(SubscriptionError::Canceled);
        }
        let last = clamped(year, month, 31);
        let due = subscription.schedule.until(last);
        if due.is_empty() {
            return Err(SubscriptionError::PaymentBookEmpty);
        }
        let issued = self.issue_all(&subscription, &due).await?;
        let company =
            store::companies::get(self.store.pool(), &subscription.row.company_id).await?;
        let payee = Party {
            name: company.name.clone(),
            tax_id: formatted(&company.tax_id),
        };
        let payer = Party {
            name: subscription.customer.name.clone(),
            tax_id: formatted(&subscription.customer.tax_id),
        };
        let mut slips = Vec::with_capacity(issued.len());
        for (instalment, row) in due.iter().zip(&issued) {
            let kind = match (&row.boleto_barcode, &row.boleto_line) {
                (Some(barcode), Some(line)) => SlipKind::Boleto {
                    typed_line: boleto::format_typed_line(line),
                    barcode: barcode.clone(),
                    bars: boleto::interleaved_2_of_5(barcode)?,
                },
                _ => {
                    let charge = store::charges::find(
                        self.store.pool(),
                        Some(&subscription.row.company_id),
                        &row.charge_id,
                    )
                    .await?
                    .ok_or_else(|| StoreError::Corrupt(format!("charge {}", row.charge_id)))?;
                    SlipKind::Pix {
                        br_code: charge.br_code,
                    }
                }
            };
            slips.push(Slip {
                number: instalment.number,
                payee: payee.clone(),
                payer: payer.clone(),
                value_cents: subscription.row.value,
                due_date: instalment.due,
                description: format!(
                    "Assinatura {} ({}) - parcela {}",
                    subscription.row.correlation_id, subscription.row.frequency, instalment.number
                ),
                kind,
            });
        }
        Ok(payment_book::render(
            &format!("Carnê - {}", company.name),
            &slips,
        )?)
    }

    /// Issues every instalment whose generation day has come, of every ACTIVE
    /// subscription (run periodically). One subscription that cannot be issued (its
    /// account lost its Pix key, say) is logged and does not hold up the others.
    /// Answers how many instalments are issued.
    pub async fn generate_due(&self) -> Result<usize, SubscriptionError> {
        let today = self.today();
        let mut count = 0;
        for row in store::subscriptions::active(self.store.pool()).await? {
            let subscription = Subscription::from_row(row)?;
            let due = subscription.schedule.until(today);
            match self.issue_all(&subscription, &due).await {
                Ok(rows) => count += rows.len(),
                Err(err) => tracing::warn!(
                    subscription = %subscription.row.id, %err,
                    "could not issue due instalments"
                ),
            }
        }
        Ok(count)
    }
}

fn formatted(tax_id: &str) -> String {
    TaxId::parse(tax_id)
        .map(|t| t.formatted())
        .unwrap_or_else(|_| tax_id.to_owned())
}

/// The boleto's 25-digit free field ("nosso número"), derived from the charge id so
/// that every issue of one instalment computes the same boleto.
fn free_field(charge_id: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(charge_id.as_bytes());
    let mut digits = String::with_capacity(25);
    for byte in digest.iter() {
        digits.push_str(&format!("{:03}", byte));
        if digits.len() >= 25 {
            break;
        }
    }
    digits.truncate(25);
    digits
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    fn schedule(frequency: Frequency, day: u8, start: Date) -> Schedule {
        Schedule {
            frequency,
            day_generate_charge: day,
            day_due: 5,
            start,
        }
    }

    #[test]
    fn monthly_day_31_lands_on_the_last_day_of_short_months() {
        let s = schedule(Frequency::Monthly, 31, date!(2027 - 01 - 10));
        let dates: Vec<Date> = (1..=5).map(|n| s.instalment(n).generation).collect();
        assert_eq!(
            dates,
            [
                date!(2027 - 01 - 31),
                date!(2027 - 02 - 28),
                date!(2027 - 03 - 31),
                date!(2027 - 04 - 30),
                date!(2027 - 05 - 31),
            ]
        );
        // A leap year's February.
        let s = schedule(Frequency::Monthly, 30, date!(2028 - 01 - 31));
        assert_eq!(s.instalment(1).generation, date!(2028 - 02 - 29));
        assert_eq!(s.instalment(2).generation, date!(2028 - 03 - 30));
    }

    #[test]
    fn the_first_instalment_is_on_or_after_the_start() {
        let s = schedule(Frequency::Monthly, 10, date!(2027 - 03 - 10));
        assert_eq!(s.instalment(1).generation, date!(2027 - 03 - 10));
        let s = schedule(Frequency::Monthly, 9, date!(2027 - 03 - 10));
        assert_eq!(s.instalment(1).generation, date!(2027 - 04 - 09));
        assert_eq!(s.instalment(1).due, date!(2027 - 04 - 14));
        let s = schedule(Frequency::Annually, 5, date!(2027 - 12 - 20));
        assert_eq!(s.instalment(1).generation, date!(2028 - 01 - 05));
        assert_eq!(s.instalment(2).generation, date!(2029 - 01 - 05));
    }

    #[test]
    fn every_frequency_steps_by_its_period() {
        let start = date!(2027 - 01 - 01);
        for (frequency, second) in [
            (Frequency::Weekly, date!(2027 - 01 - 08)),
            (Frequency::Biweekly, date!(2027 - 01 - 15)),
            (Frequency::Monthly, date!(2027 - 02 - 01)),
            (Frequency::Bimonthly, date!(2027 - 03 - 01)),
            (Frequency::Quarterly, date!(2027 - 04 - 01)),
            (Frequency::Semiannually, date!(2027 - 07 - 01)),
            (Frequency::Annually, date!(2028 - 01 - 01)),
        ] {
            let s = schedule(frequency, 1, start);
            assert_eq!(s.instalment(1).generation, start, "{frequency:?}");
            assert_eq!(s.instalment(2).generation, second, "{frequency:?}");
        }
        // Due dates cross month ends.
        let s = schedule(Frequency::Weekly, 28, date!(2027 - 02 - 01));
        assert_eq!(s.instalment(1).due, date!(2027 - 03 - 05));
    }

    #[test]
    fn until_stops_at_the_last_generation_day() {
        let s = schedule(Frequency::Monthly, 15, date!(2027 - 01 - 01));
        let numbers: Vec<u32> = s
            .until(date!(2027 - 04 - 30))
            .iter()
            .map(|i| i.number)
            .collect();
        assert_eq!(numbers, [1, 2, 3, 4]);
        assert!(s.until(date!(2027 - 01 - 14)).is_empty());
        assert_eq!(s.until(date!(2027 - 01 - 15)).len(), 1);
    }

    #[test]
    fn free_fields_are_25_digits_and_differ_by_charge() {
        let a = free_field("chg_a");
        assert_eq!(a.len(), 25);
        assert!(a.bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(a, free_field("chg_a"));
        assert_ne!(a, free_field("chg_b"));
    }
}
