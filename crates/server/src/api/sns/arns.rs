//! Topic and subscription ARNs read from a request, with SNS's words for
//! one that is malformed, of another region, or of a topic or
//! subscription that is not there (recorded: LocalStack test_sns.py,
//! `test_publish_wrong_arn_format`, `test_unsubscribe_wrong_arn_format`,
//! `TestSNSMultiRegions::test_cross_region_access`).

use sluice_broker::Broker;
use sluice_core::queue_name::Account;
use sluice_core::topic_name::sns_arn_parts;
use sluice_protocol::sns::SnsError;

use crate::service::{RequestContext, Service};

/// SNS's refusal of an ARN with fewer than six `:`-separated elements.
fn too_few_elements(param: &str, arn: &str) -> Option<SnsError> {
    let n = arn.split(':').count();
    (n < 6).then(|| {
        SnsError::invalid_parameter(format!(
            "{param} Reason: An ARN must have at least 6 elements, not {n}"
        ))
    })
}

/// The key of the topic `arn` names, given as parameter `param`
/// (`TopicArn`, `TargetArn`, `ResourceArn`): of the request's region
/// (another region's is `Invalid parameter: <param>`), of any account.
pub fn topic_key<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    param: &str,
    arn: &str,
) -> Result<String, SnsError> {
    if let Some(e) = too_few_elements(param, arn) {
        return Err(e);
    }
    let account = &svc.config.account;
    let region = svc.request_region(ctx);
    match sns_arn_parts(arn) {
        Some((arn_region, _, name)) if arn_region == region && !name.contains(':') => account
            .topic_key_from_arn(arn)
            .ok_or_else(|| SnsError::invalid_parameter(param)),
        _ => Err(SnsError::invalid_parameter(param)),
    }
}

/// The topic key and id of the subscription `arn` names (parameter
/// `SubscriptionArn`); an ARN of a topic without a subscription id is
/// `Invalid parameter: SubscriptionId`.
pub fn subscription<B: Broker>(
    svc: &Service<B>,
    ctx: &RequestContext,
    arn: &str,
) -> Result<(String, String), SnsError> {
    if let Some(e) = too_few_elements("SubscriptionArn", arn) {
        return Err(e);
    }
    let account: &Account = &svc.config.account;
    let region = svc.request_region(ctx);
    match sns_arn_parts(arn) {
        Some((arn_region, _, resource)) if arn_region == region => {
            if !resource.contains(':') {
                return Err(SnsError::invalid_parameter("SubscriptionId"));
            }
            account
                .subscription_from_arn(arn)
                .ok_or_else(|| SnsError::invalid_parameter("SubscriptionArn"))
        }
        Some(_) => Err(SnsError::invalid_parameter("SubscriptionArn")),
        None => Err(SnsError::invalid_parameter("SubscriptionArn")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// N1: an ARN of too few elements is refused with how many it has
    /// (recorded: `randomstring` is 1, `randomstring:1` is 2).
    #[test]
    fn n1_too_few_elements_are_counted() {
        let e = too_few_elements("TopicArn", "randomstring").unwrap();
        assert_eq!(
            e.message,
            "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 1"
        );
        let e = too_few_elements("TopicArn", "randomstring:1").unwrap();
        assert!(e.message.ends_with("not 2"));
        let e = too_few_elements("SubscriptionArn", "arn:aws:sns:us-east-1:random").unwrap();
        assert!(e.message.ends_with("not 5"));
        assert!(too_few_elements("TopicArn", "arn:aws:sns:us-east-1:1:t").is_none());
    }
}
